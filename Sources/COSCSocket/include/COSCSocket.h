// Socket helpers of the OSC service (control side). Only plain C types here: this header must not
// include a socket header (see CLibLo's shim.h).
#ifndef SOUNDSTAGE_COSCSOCKET_H
#define SOUNDSTAGE_COSCSOCKET_H

#include <stddef.h>

/// Finds a port that is free for both UDP and TCP on `host` (the kernel picks it). Returns the port,
/// or -errno.
int loshim_probe_free_port(const char *host);

/// liblo 0.31 always binds the wildcard address. This replaces the server's socket (same descriptor
/// number, so liblo keeps using it) by one bound to `host`:`port`; for TCP it also listens.
/// Returns 0, or an errno value (the server then has an unbound socket and must be freed).
int loshim_rebind(void *server, const char *host, int port, int socktype);

/// Asks for a large socket receive buffer (bursts of small datagrams overflow the default ~200 KB).
/// Tries SO_RCVBUFFORCE (needs CAP_NET_ADMIN), then SO_RCVBUF (capped by net.core.rmem_max).
/// Returns the size granted.
int loshim_set_receive_buffer(int fd, int bytes);

/// Asks the kernel to report, with each datagram, how many it has dropped on this socket so far because
/// the receive queue was full (Linux SO_RXQ_OVFL). Returns 0 on success.
int loshim_enable_drop_count(int fd);

/// Receives one datagram without blocking. Returns its full length (which may exceed `capacity`:
/// the datagram was too large and is truncated in `buffer`; 0 is an empty datagram), -EAGAIN when
/// nothing is waiting, or another -errno.
/// The sender's numeric host and port are written to `host` / `port`; `dropped` receives the kernel's
/// running count of datagrams dropped on this socket (unchanged when the kernel sent none).
long loshim_recv_datagram(int fd, void *buffer, size_t capacity, char *host, size_t hostCapacity,
                            int *port, unsigned int *dropped);

/// Binds a TCP socket to a numeric IPv4 or IPv6 `host` and `port` (0: the kernel picks one), with
/// SO_REUSEADDR, and closes it again. Returns the port it got, -EINVAL when `host` is not a numeric
/// address, or another -errno.
int oscsocket_tcp_bind_probe(const char *host, int port);

/// 1 when a TCP connection to a numeric `host` and `port` succeeds now, else 0.
int oscsocket_tcp_connects(const char *host, int port);

/// A non-blocking TCP socket listening on a numeric IPv4 or IPv6 `host` and `port`, with SO_REUSEADDR.
/// Returns the descriptor, or -errno (-EINVAL for a host that is not numeric).
int oscsocket_tcp_listen(const char *host, int port);

/// A non-blocking stream socket connected to the Unix socket at `path`, or -errno.
int oscsocket_unix_connect(const char *path);

/// The next connection on the listening socket `fd`, non-blocking and close-on-exec, or -errno.
int oscsocket_accept(int fd);

/// A non-blocking, close-on-exec pipe: `fds[0]` reads, `fds[1]` writes. 0, or -errno.
int oscsocket_pipe(int fds[2]);

#endif
