#!/usr/bin/env bash
# The assumptions api/http/interpose.c rests on, checked on a build: run from
# the repository root, `tests/api/http/interpose_guards.sh BUILD` fails,
# saying what broke, when
#   - BUILD/chessd does not export recv and close as text symbols (`nm -D`:
#     `T recv`, `T close`): statically linked, or a link that hides them, so
#     libmicrohttpd's calls reach libc's and the strict reader sees nothing;
#   - BUILD/chessd has no libmicrohttpd shared object (`ldd`), or that object
#     imports a receive function other than the ones pinned in MHD_ALLOWED
#     below (recvmsg, recvfrom, readv, its own syscall ...), or no longer
#     imports recv, or imports a fortified one (__recv_chk);
#   - BUILD/chessd or an object under BUILD/{api,store,rules} imports a
#     fortified receive function (a _FORTIFY_SOURCE build turns recv into
#     __recv_chk, which is libc's, not chessd's).
# It first runs each check on a small faulty case built here and fails
# unless each fault is reported: a check that cannot fail would pass silently.
set -euo pipefail

# The receive functions a shared object may read a socket through: any of
# these imported by libmicrohttpd is looked at (with their fortified twins).
RECEIVE_PATTERN='^(__)?(recv|recvfrom|recvmsg|recvmmsg|read|readv|pread|pread64|preadv|preadv64|preadv2|preadv64v2|splice|syscall)(_chk)?$|^io_uring_|^gnutls_record_recv|^SSL_read'
# What libmicrohttpd 0.9.75 imports of them, and why each is harmless:
#   recv                its socket reads: chessd's recv (interpose.c), with flags 0
#   read                the eventfd its threads wake each other with (MHD_itc_clear_), never a socket
#   pread64             responses made from a file (MHD_create_response_from_fd), which chessd never makes
#   gnutls_record_recv  HTTPS inside libmicrohttpd (MHD_USE_TLS), which chessd never turns on
# A new libmicrohttpd that imports anything else must be read before it is added here.
MHD_ALLOWED=" recv read pread64 gnutls_record_recv "
# Fortified receive functions: libc's own, past chessd's recv.
FORTIFIED_PATTERN='^__(recv|recvfrom|recvmsg)(_chk|_chk_warn)$'

fail() {
    echo "interpose guards: $*" >&2
    return 1
}

# The dynamic symbols of $1 defined as text (T) there, one name a line.
exported_text() {
    nm -D --defined-only "$1" 2>/dev/null | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'
}

# The dynamic imports of $1, one name a line, versions dropped.
dynamic_imports() {
    nm -D --undefined-only "$1" 2>/dev/null | awk '{ sub(/@.*/, "", $NF); print $NF }'
}

check_exports() {
    local binary=$1 exported status=0 name
    exported=$(exported_text "$binary")
    if [ -z "$exported" ]; then
        fail "$binary exports no symbols (nm -D): statically linked? chessd's recv and close must be found before libc's by the dynamic linker"
        return 1
    fi
    for name in recv close; do
        grep -qx "$name" <<<"$exported" \
            || fail "$binary does not export $name as text (nm -D shows no 'T $name'): libmicrohttpd's $name calls would reach libc's and bypass api/http/interpose.c" \
            || status=1
    done
    return $status
}

# The libmicrohttpd shared object $1 is linked against (ldd), on stdout.
find_libmicrohttpd() {
    local binary=$1 lib
    lib=$(ldd "$binary" 2>/dev/null | awk '$1 ~ /^libmicrohttpd\.so/ && $2 == "=>" { print $3; exit }')
    if [ -z "$lib" ] || [ ! -f "$lib" ]; then
        fail "$binary has no libmicrohttpd shared object (ldd): statically linked, libmicrohttpd's calls would not reach chessd's recv and close"
        return 1
    fi
    printf '%s\n' "$lib"
}

check_libmicrohttpd_imports() {
    local lib=$1 imports receive name status=0
    imports=$(dynamic_imports "$lib")
    receive=$(grep -E "$RECEIVE_PATTERN" <<<"$imports" | sort -u || true)
    for name in $receive; do
        if [[ "$name" =~ $FORTIFIED_PATTERN ]]; then
            fail "$lib imports $name: a fortified libmicrohttpd reads through libc's $name, past chessd's recv (api/http/interpose.c)" || status=1
        elif [[ "$MHD_ALLOWED" != *" $name "* ]]; then
            fail "$lib imports $name, which libmicrohttpd 0.9.75 does not: if it reads sockets through it, the strict reader (api/http/wire.c) sees none of those bytes; read it, then pin it in MHD_ALLOWED ($0) and api/http/mhd_version.c" || status=1
        fi
    done
    grep -qx recv <<<"$imports" \
        || fail "$lib does not import recv: it reads its sockets some other way, so chessd's recv (api/http/interpose.c) sees nothing" \
        || status=1
    return $status
}

# Fails, naming each, when a file among the arguments (objects, or a binary
# or shared object: its dynamic imports) imports a fortified receive function.
check_unfortified() {
    local file objects=() found status=0
    for file; do
        if [[ "$file" == *.o ]]; then
            objects+=("$file")
        else
            dynamic_imports "$file" | sed "s|^|$file: |"
        fi
    done >"$scratch/imports"
    # One nm for every object ("file: U name" lines): nm is slow to start.
    [ "${#objects[@]}" -eq 0 ] || nm -A -u "${objects[@]}" | awk '{ print $1, $NF }' >>"$scratch/imports"
    found=$(awk '{ sub(/:$/, "", $1); sub(/@.*/, "", $2); print $1, $2 }' "$scratch/imports" \
        | awk -v pattern="$FORTIFIED_PATTERN" '$2 ~ pattern' | sort -u)
    while read -r file name; do
        [ -n "$file" ] || continue
        fail "$file imports $name: built with _FORTIFY_SOURCE, its receive calls go to libc's $name, past chessd's recv (api/http/interpose.c); build without -D_FORTIFY_SOURCE" || status=1
    done <<<"$found"
    return $status
}

check_build() {
    local build=$1 binary=$1/chessd lib status=0 dirs
    [ -x "$binary" ] || { fail "$binary is missing: build first"; return 1; }
    check_exports "$binary" || status=1
    if lib=$(find_libmicrohttpd "$binary"); then
        check_libmicrohttpd_imports "$lib" || status=1
    else
        status=1
    fi
    dirs=$(for d in "$build/api" "$build/store" "$build/rules"; do if [ -d "$d" ]; then echo "$d"; fi; done)
    # shellcheck disable=SC2046,SC2086 # the object paths have no spaces
    check_unfortified "$binary" $( [ -z "$dirs" ] || find $dirs -name '*.o' | sort) || status=1
    return $status
}

# Expects "$@" to fail and say $expect; else the self-test fails.
expect_fault() {
    local expect=$1 output
    shift
    if output=$("$@" 2>&1); then
        fail "self-test: '$*' passed; the check has stopped finding faults"
        exit 1
    fi
    if ! grep -qF -- "$expect" <<<"$output"; then
        fail "self-test: '$*' did not say \"$expect\"; it said: $output"
        exit 1
    fi
}

# Faulty cases: a binary whose recv is renamed (recv_renamed), so it exports
# close but not recv and links no libmicrohttpd; a fortified object and
# shared object (recv into a fixed buffer under -D_FORTIFY_SOURCE=2, which
# gcc turns into __recv_chk); a stand-in libmicrohttpd that reads with
# recvmsg; one that imports no recv at all.
self_test() (
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    cc=${CC:-cc}
    cat >"$dir/lib.c" <<'EOF'
#include <sys/socket.h>
#include <unistd.h>
ssize_t lib_read(int fd, void *buf, size_t n);
ssize_t lib_read(int fd, void *buf, size_t n) { ssize_t r = recv(fd, buf, n, 0); close(fd); return r; }
EOF
    cat >"$dir/renamed.c" <<'EOF'
#include <sys/types.h>
#include <unistd.h>
ssize_t lib_read(int fd, void *buf, size_t n);
ssize_t recv_renamed(int fd, void *buf, size_t len, int flags);
ssize_t recv_renamed(int fd, void *buf, size_t len, int flags) { (void)buf; (void)len; (void)flags; return fd; }
int close(int fd) { return fd; }
int main(void) { char b[1]; return (int)lib_read(-1, b, 0) + (int)recv_renamed(0, b, 0, 0); }
EOF
    cat >"$dir/fortified.c" <<'EOF'
#include <sys/socket.h>
ssize_t fortified_read(int fd, size_t n);
ssize_t fortified_read(int fd, size_t n) { char buf[64]; return recv(fd, buf, n, 0) + buf[0]; }
EOF
    cat >"$dir/recvmsg.c" <<'EOF'
#include <sys/socket.h>
ssize_t lib_read(int fd, void *buf, size_t n);
ssize_t lib_read(int fd, void *buf, size_t n) { (void)buf; (void)n; struct msghdr m = { 0 }; return recvmsg(fd, &m, 0) + recv(fd, buf, n, 0); }
EOF
    cat >"$dir/norecv.c" <<'EOF'
#include <unistd.h>
ssize_t lib_read(int fd, void *buf, size_t n);
ssize_t lib_read(int fd, void *buf, size_t n) { return read(fd, buf, n); }
EOF
    "$cc" -shared -fPIC -o "$dir/libplain.so" "$dir/lib.c"
    "$cc" -o "$dir/renamed" "$dir/renamed.c" "$dir/libplain.so" -Wl,-rpath,"$dir"
    "$cc" -O2 -D_FORTIFY_SOURCE=2 -c -o "$dir/fortified.o" "$dir/fortified.c"
    "$cc" -O2 -D_FORTIFY_SOURCE=2 -shared -fPIC -o "$dir/libfortified.so" "$dir/fortified.c" "$dir/lib.c"
    "$cc" -shared -fPIC -o "$dir/librecvmsg.so" "$dir/recvmsg.c"
    "$cc" -shared -fPIC -o "$dir/libnorecv.so" "$dir/norecv.c"
    expect_fault "does not export recv as text" check_exports "$dir/renamed"
    if check_exports "$dir/renamed" 2>&1 | grep -q "does not export close"; then
        fail "self-test: check_exports blamed close, which the faulty binary does export"
        exit 1
    fi
    expect_fault "has no libmicrohttpd shared object" find_libmicrohttpd "$dir/renamed"
    expect_fault "imports __recv_chk" check_unfortified "$dir/fortified.o"
    expect_fault "imports __recv_chk" check_libmicrohttpd_imports "$dir/libfortified.so"
    expect_fault "imports recvmsg, which libmicrohttpd 0.9.75 does not" check_libmicrohttpd_imports "$dir/librecvmsg.so"
    expect_fault "does not import recv" check_libmicrohttpd_imports "$dir/libnorecv.so"
    # And the plain stand-in passes: the checks do not fail on everything.
    check_libmicrohttpd_imports "$dir/libplain.so" || { fail "self-test: a plain recv importer was refused"; exit 1; }
    check_unfortified "$dir/libplain.so" || { fail "self-test: an unfortified object was refused"; exit 1; }
)

build=${1:?usage: tests/api/http/interpose_guards.sh BUILD}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
self_test
if check_build "$build"; then
    echo "interpose guards: $build/chessd exports recv and close; libmicrohttpd ($(find_libmicrohttpd "$build/chessd")) receives only through recv; nothing fortified"
else
    exit 1
fi
