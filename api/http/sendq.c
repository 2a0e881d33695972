/* See sendq.h. <linux/tcp.h> stands in for <netinet/tcp.h> (the two clash):
 * glibc's struct tcp_info stops before tcpi_bytes_acked. */
#include "sendq.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

bool sendq_cap(int fd, int bytes)
{
    return setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0;
}

bool sendq_unsent(int fd, size_t *unsent)
{
    int n = 0;
    if (ioctl(fd, SIOCOUTQ, &n) != 0 || n < 0)
        return false;
    *unsent = (size_t)n;
    return true;
}

bool sendq_acked(int fd, uint64_t *acked)
{
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0
        || length < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked)
        return false;
    *acked = info.tcpi_bytes_acked;
    return true;
}

bool sendq_reset_on_close(int fd)
{
    struct linger linger = { .l_onoff = 1, .l_linger = 0 };
    return setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger) == 0;
}
