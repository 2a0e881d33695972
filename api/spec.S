/* Embeds openapi.yaml into the binary as chessd_openapi_start..end. */
    .section .rodata
    .global chessd_openapi_start
    .global chessd_openapi_end
chessd_openapi_start:
    .incbin "openapi.yaml"
chessd_openapi_end:
    .byte 0
    .section .note.GNU-stack,"",@progbits
