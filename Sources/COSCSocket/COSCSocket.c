// Socket helpers of the OSC service (control side): resolving, free-port probing, rebinding liblo's
// sockets to one address, receive-buffer size and drop counts, and receiving datagrams with their
// sender. Compiled here rather than inline in a header, so no Swift module imports the socket headers
// through a module map of ours (see CLibLo's shim.h).
#define _GNU_SOURCE  // accept4, pipe2
#include "COSCSocket.h"

#include <lo/lo.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

/// Resolves host:port (numeric service) for a socket of `socktype`; caller frees with freeaddrinfo.
static int loshim_resolve(const char *host, int port, int socktype, struct addrinfo **out) {
    char service[16];
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socktype;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(service, sizeof(service), "%d", port);
    return getaddrinfo(host, service, &hints, out);
}

/// Finds a port that is free for both UDP and TCP on `host` (the kernel picks it). Returns the port,
/// or -errno.
int loshim_probe_free_port(const char *host) {
    struct addrinfo *ai = NULL;
    if (loshim_resolve(host, 0, SOCK_DGRAM, &ai) != 0 || !ai) return -EADDRNOTAVAIL;
    int udp = socket(ai->ai_family, SOCK_DGRAM, 0);
    if (udp < 0) { int e = errno; freeaddrinfo(ai); return -e; }
    if (bind(udp, ai->ai_addr, ai->ai_addrlen) != 0) { int e = errno; close(udp); freeaddrinfo(ai); return -e; }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int port = -EINVAL;
    if (getsockname(udp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    close(udp);
    return port;
}

/// liblo 0.31 always binds the wildcard address. This replaces the server's socket (same descriptor
/// number, so liblo keeps using it) by one bound to `host`:`port`; for TCP it also listens.
/// Returns 0, or an errno value (the server then has an unbound socket and must be freed).
int loshim_rebind(void *server, const char *host, int port, int socktype) {
    int fd = lo_server_get_socket_fd((lo_server)server);
    if (fd < 0) return EBADF;
    struct addrinfo *ai = NULL;
    if (loshim_resolve(host, port, socktype, &ai) != 0 || !ai) return EADDRNOTAVAIL;
    int replacement = socket(ai->ai_family, socktype, 0);
    if (replacement < 0) { int e = errno; freeaddrinfo(ai); return e; }
    int one = 1;
    if (socktype == SOCK_STREAM) setsockopt(replacement, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // Release the wildcard binding first: put an unbound socket on the descriptor number.
    int placeholder = socket(ai->ai_family, socktype, 0);
    if (placeholder < 0 || dup2(placeholder, fd) < 0) {
        int e = errno;
        if (placeholder >= 0) close(placeholder);
        close(replacement);
        freeaddrinfo(ai);
        return e;
    }
    close(placeholder);
    if (bind(replacement, ai->ai_addr, ai->ai_addrlen) != 0) {
        int e = errno; close(replacement); freeaddrinfo(ai); return e;
    }
    freeaddrinfo(ai);
    if (socktype == SOCK_STREAM && listen(replacement, 16) != 0) { int e = errno; close(replacement); return e; }
    if (dup2(replacement, fd) < 0) { int e = errno; close(replacement); return e; }
    close(replacement);
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    return 0;
}

/// Asks for a large socket receive buffer (bursts of small datagrams overflow the default ~200 KB).
/// Tries SO_RCVBUFFORCE (needs CAP_NET_ADMIN), then SO_RCVBUF (capped by net.core.rmem_max).
/// Returns the size granted.
int loshim_set_receive_buffer(int fd, int bytes) {
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    }
    int granted = 0;
    socklen_t len = sizeof(granted);
    getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len);
    return granted;
}

/// Asks the kernel to report, with each datagram, how many it has dropped on this socket so far because
/// the receive queue was full (Linux SO_RXQ_OVFL). Returns 0 on success.
int loshim_enable_drop_count(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on));
}

/// Receives one datagram without blocking. Returns its full length (which may exceed `capacity`:
/// the datagram was too large and is truncated in `buffer`; 0 is an empty datagram), -EAGAIN when
/// nothing is waiting, or another -errno.
/// The sender's numeric host and port are written to `host` / `port`; `dropped` receives the kernel's
/// running count of datagrams dropped on this socket (unchanged when the kernel sent none).
long loshim_recv_datagram(int fd, void *buffer, size_t capacity, char *host, size_t hostCapacity,
                            int *port, unsigned int *dropped) {
    struct sockaddr_storage ss;
    struct iovec iov = { buffer, capacity };
    char control[CMSG_SPACE(sizeof(unsigned int))];
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_name = &ss;
    msg.msg_namelen = sizeof(ss);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(fd, &msg, MSG_TRUNC | MSG_DONTWAIT);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? -EAGAIN : -errno;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
            memcpy(dropped, CMSG_DATA(c), sizeof(unsigned int));
        }
    }
    socklen_t len = msg.msg_namelen;
    char service[16];
    if (getnameinfo((struct sockaddr *)&ss, len, host, hostCapacity, service, sizeof(service),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        if (hostCapacity) host[0] = 0;
        *port = 0;
    } else {
        *port = atoi(service);
    }
    return (long)n;
}

/// Fills `address` for a numeric IPv4 or IPv6 host; returns its length, or 0 when `host` is neither.
static socklen_t numeric_address(const char *host, int port, struct sockaddr_storage *address) {
    memset(address, 0, sizeof(*address));
    if (strchr(host, ':')) {
        struct sockaddr_in6 *six = (struct sockaddr_in6 *)address;
        six->sin6_family = AF_INET6;
        six->sin6_port = htons((uint16_t)port);
        return inet_pton(AF_INET6, host, &six->sin6_addr) == 1 ? (socklen_t)sizeof(*six) : 0;
    }
    struct sockaddr_in *four = (struct sockaddr_in *)address;
    four->sin_family = AF_INET;
    four->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &four->sin_addr) == 1 ? (socklen_t)sizeof(*four) : 0;
}

int oscsocket_tcp_bind_probe(const char *host, int port) {
    struct sockaddr_storage address;
    socklen_t length = numeric_address(host, port, &address);
    if (length == 0) return -EINVAL;
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (struct sockaddr *)&address, length) != 0) { int e = errno; close(fd); return -e; }
    struct sockaddr_storage bound;
    socklen_t size = sizeof(bound);
    if (getsockname(fd, (struct sockaddr *)&bound, &size) != 0) { int e = errno; close(fd); return -e; }
    close(fd);
    if (bound.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    return ntohs(((struct sockaddr_in *)&bound)->sin_port);
}

int oscsocket_tcp_connects(const char *host, int port) {
    struct sockaddr_storage address;
    socklen_t length = numeric_address(host, port, &address);
    if (length == 0) return 0;
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int connected = connect(fd, (struct sockaddr *)&address, length) == 0;
    close(fd);
    return connected;
}

int oscsocket_tcp_listen(const char *host, int port) {
    struct sockaddr_storage address;
    socklen_t length = numeric_address(host, port, &address);
    if (length == 0) return -EINVAL;
    int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (struct sockaddr *)&address, length) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int oscsocket_unix_connect(const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(address.sun_path)) return -ENAMETOOLONG;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    int flags = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    return fd;
}

int oscsocket_accept(int fd) {
    int client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return client >= 0 ? client : -errno;
}

int oscsocket_pipe(int fds[2]) {
    return pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0 ? 0 : -errno;
}
