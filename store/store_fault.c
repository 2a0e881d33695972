/* The names of store_fault_t (store.h), in a file of their own so that a
 * program bringing its own store_* functions (the games fuzz target) links
 * them without store_redis.o. */
#include "store.h"

static const char *const fault_names[STORE_FAULT_COUNT] = {
    [STORE_FAULT_NONE] = "none",
    [STORE_FAULT_UNREACHABLE] = "unreachable",
    [STORE_FAULT_TIMEOUT] = "timeout",
    [STORE_FAULT_AUTH] = "auth_refused",
    [STORE_FAULT_DATABASE] = "database_refused",
    [STORE_FAULT_TLS] = "tls_failed",
    [STORE_FAULT_CLUSTER] = "cluster_down",
    [STORE_FAULT_PROTOCOL] = "protocol_error",
};

const char *store_fault_name(store_fault_t fault)
{
    return (unsigned)fault < STORE_FAULT_COUNT ? fault_names[fault] : "unknown";
}

bool store_fault_is_setting(store_fault_t fault)
{
    return fault == STORE_FAULT_AUTH || fault == STORE_FAULT_DATABASE || fault == STORE_FAULT_TLS;
}
