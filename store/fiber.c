/* See fiber.h. THE SWITCH: on x86-64 a fiber's registers are saved and
 * loaded by fiber_switch_to below, which keeps what the System V ABI has a
 * callee keep (rbx, rbp, r12-r15, rsp, MXCSR, the x87 control word); other
 * machines use ucontext. AddressSanitizer is told of every switch, or it
 * reports the fiber's stack as overflowing. tests/store/test_fiber.c pins it. */
#include "fiber.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../rules/base/clock.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

struct fiber {
#if defined(__x86_64__)
    void *sp;        /* the fiber's saved stack pointer while it is off the CPU */
    void *caller_sp; /* the thread's, while the fiber runs */
#else
    ucontext_t context, caller;
#endif
    char *mapping; /* the guard page, then the stack */
    size_t mapping_bytes;
    void (*fn)(void *arg);
    void *arg;
    bool done;  /* fn returned: the fiber may start another */
    bool ready; /* what fiber_continue said of the wait */
    fiber_wait_t wait;
    void *locals[FIBER_LOCAL_COUNT];
#ifdef FIBER_ASAN
    void *fake_stack;
    const void *caller_bottom;
    size_t caller_size;
#endif
};

static _Thread_local fiber_t *current;
static void (*destructors[FIBER_LOCAL_COUNT])(void *value);

/* --- AddressSanitizer's fiber notes (nothing without it) --- */

static void asan_start(void **fake_stack, const void *bottom, size_t size)
{
#ifdef FIBER_ASAN
    __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
    (void)fake_stack, (void)bottom, (void)size;
#endif
}

static void asan_finish(void *fake_stack, const void **bottom, size_t *size)
{
#ifdef FIBER_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, bottom, size);
#else
    (void)fake_stack, (void)bottom, (void)size;
#endif
}

/* The fiber's loop: each start runs one fn, then hands the thread back. */
void fiber_main(fiber_t *f);

static void switch_out(fiber_t *f);

void fiber_main(fiber_t *f)
{
#ifdef FIBER_ASAN
    asan_finish(NULL, &f->caller_bottom, &f->caller_size);
#endif
    for (;;) {
        f->fn(f->arg);
        f->done = true;
        switch_out(f);
    }
}

#if defined(__x86_64__)
/* Saves the callee-kept registers on this stack, stores its pointer in
 * *save_sp, loads load_sp and returns on that stack. A new fiber's stack is
 * laid out as a saved one whose return address is fiber_trampoline. */
__attribute__((visibility("hidden"))) void fiber_switch_to(void **save_sp, void *load_sp);
__attribute__((visibility("hidden"))) void fiber_trampoline(void);
__asm__(".text\n"
        ".globl fiber_switch_to\n"
        ".hidden fiber_switch_to\n"
        ".type fiber_switch_to,@function\n"
        "fiber_switch_to:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size fiber_switch_to,.-fiber_switch_to\n"
        ".globl fiber_trampoline\n"
        ".hidden fiber_trampoline\n"
        ".type fiber_trampoline,@function\n"
        "fiber_trampoline:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n"
        "    movq %rbx, %rdi\n"
        "    call fiber_main\n"
        "    ud2\n"
        "    .cfi_endproc\n"
        ".size fiber_trampoline,.-fiber_trampoline\n");

/* The frame fiber_switch_to loads first: the control words' defaults,
 * r15..r12, rbx (the fiber), rbp, then fiber_trampoline to return to, so
 * that it calls fiber_main with the stack aligned as the ABI wants. */
static void prepare(fiber_t *f)
{
    uint64_t *sp = (uint64_t *)(void *)(f->mapping + f->mapping_bytes);
    *--sp = (uint64_t)(uintptr_t)fiber_trampoline;
    *--sp = 0;                   /* rbp */
    *--sp = (uint64_t)(uintptr_t)f; /* rbx */
    *--sp = 0;                   /* r12 */
    *--sp = 0;                   /* r13 */
    *--sp = 0;                   /* r14 */
    *--sp = 0;                   /* r15 */
    *--sp = 0x1F80u | (uint64_t)0x037Fu << 32; /* MXCSR, then the x87 control word */
    f->sp = sp;
}

static void switch_in_raw(fiber_t *f) { fiber_switch_to(&f->caller_sp, f->sp); }
static void switch_out_raw(fiber_t *f) { fiber_switch_to(&f->sp, f->caller_sp); }
#else
static void entry(unsigned high, unsigned low)
{
    fiber_main((fiber_t *)(uintptr_t)((uint64_t)high << 32 | low));
}

static void prepare(fiber_t *f)
{
    getcontext(&f->context);
    f->context.uc_stack.ss_sp = f->mapping + sysconf(_SC_PAGESIZE);
    f->context.uc_stack.ss_size = f->mapping_bytes - (size_t)sysconf(_SC_PAGESIZE);
    f->context.uc_link = NULL;
    uint64_t p = (uint64_t)(uintptr_t)f;
    makecontext(&f->context, (void (*)(void))entry, 2, (unsigned)(p >> 32), (unsigned)p);
}

static void switch_in_raw(fiber_t *f) { swapcontext(&f->caller, &f->context); }
static void switch_out_raw(fiber_t *f) { swapcontext(&f->context, &f->caller); }
#endif

/* From the fiber back to the thread's stack; returns when it is run again. */
static void switch_out(fiber_t *f)
{
    current = NULL;
#ifdef FIBER_ASAN
    asan_start(&f->fake_stack, f->caller_bottom, f->caller_size);
#endif
    switch_out_raw(f);
#ifdef FIBER_ASAN
    asan_finish(f->fake_stack, &f->caller_bottom, &f->caller_size);
#endif
    current = f;
}

/* From the thread's stack to the fiber, until it is done or waits. */
static fiber_state_t switch_in(fiber_t *f)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *fake_stack = NULL;
    asan_start(&fake_stack, f->mapping + page, f->mapping_bytes - page);
    current = f;
    switch_in_raw(f);
    asan_finish(fake_stack, NULL, NULL);
    current = NULL;
    return f->done ? FIBER_DONE : FIBER_WAITING;
}

fiber_t *fiber_new(size_t stack_bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (stack_bytes + page - 1) / page * page + page;
    fiber_t *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1,
                   0);
    if (m == MAP_FAILED) {
        free(f);
        return NULL;
    }
    if (mprotect(m, page, PROT_NONE)) {
        munmap(m, bytes);
        free(f);
        return NULL;
    }
    f->mapping = m;
    f->mapping_bytes = bytes;
    f->done = true;
    prepare(f);
    return f;
}

void fiber_free(fiber_t *f)
{
    if (!f)
        return;
    for (int key = 0; key < FIBER_LOCAL_COUNT; key++)
        if (f->locals[key] && destructors[key])
            destructors[key](f->locals[key]);
    munmap(f->mapping, f->mapping_bytes);
    free(f);
}

fiber_state_t fiber_start(fiber_t *f, void (*fn)(void *arg), void *arg)
{
    f->fn = fn;
    f->arg = arg;
    f->done = false;
    f->wait = (fiber_wait_t){ .fd = -1 };
    return switch_in(f);
}

fiber_state_t fiber_continue(fiber_t *f, bool ready)
{
    f->ready = ready;
    return switch_in(f);
}

const fiber_wait_t *fiber_waits_for(const fiber_t *f) { return &f->wait; }

fiber_t *fiber_self(void) { return current; }

/* fiber_wait off a fiber: poll() (or a sleep, fd -1) until ready or late. */
static bool block(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - clock_now_ms();
        if (left <= 0)
            return false;
        if (fd < 0) {
            struct timespec ts = { (time_t)(left / 1000), (long)(left % 1000) * 1000000L };
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd p = { .fd = fd, .events = events };
        int n = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (n > 0 || (n < 0 && errno != EINTR))
            return true; /* an error: the I/O that follows reports it */
    }
}

bool fiber_wait(int fd, short events, int64_t deadline_ms)
{
    fiber_t *f = current;
    if (!f)
        return block(fd, events, deadline_ms);
    f->wait = (fiber_wait_t){ .fd = fd, .events = events, .deadline_ms = deadline_ms };
    f->ready = false;
    switch_out(f);
    f->wait = (fiber_wait_t){ .fd = -1 };
    return f->ready && fd >= 0;
}

void **fiber_local(fiber_t *f, fiber_local_key_t key) { return &f->locals[key]; }

void fiber_local_destructor(fiber_local_key_t key, void (*fn)(void *value)) { destructors[key] = fn; }
