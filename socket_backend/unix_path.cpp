// SPDX-License-Identifier: MIT
// The socket file of a Unix-domain listener: a leftover file nobody listens
// on any more (a crashed daemon's) is replaced; a live one is left alone and
// the listen fails with EADDRINUSE; a file that is not a socket is never
// removed.  The file is removed at close only if it is still the one bound.
#include "tcp_internal.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace twinwire::tcp {
namespace {

/// The path of a filesystem (not abstract) Unix address, else nullptr.
const char *path_of(const struct sockaddr *sa, uint32_t len, char *buf, size_t buflen)
{
    if (sa->sa_family != AF_UNIX) return nullptr;
    auto *un = reinterpret_cast<const sockaddr_un *>(sa);
    size_t max = len - offsetof(sockaddr_un, sun_path);
    if (max == 0 || un->sun_path[0] == '\0') return nullptr; // abstract or unnamed: no file
    max = std::min(max, sizeof un->sun_path);
    size_t n = strnlen(un->sun_path, max);
    if (n + 1 > buflen) return nullptr;
    memcpy(buf, un->sun_path, n);
    buf[n] = '\0';
    return buf;
}

} // namespace

int unix_path_prepare(const struct sockaddr *sa, uint32_t len)
{
    char path[sizeof(sockaddr_un::sun_path) + 1];
    if (!path_of(sa, len, path, sizeof path)) return 0;
    struct stat st;
    if (lstat(path, &st) < 0) return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode)) return -EADDRINUSE; // someone's file: bind would fail, never remove it
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) return -errno;
    int rc = ::connect(probe, sa, len);
    int err = rc < 0 ? errno : 0;
    ::close(probe);
    if (rc == 0) return -EADDRINUSE;                         // a live listener
    if (err != ECONNREFUSED) return -err;                    // EACCES and the like: not ours to judge
    return unlink(path) < 0 && errno != ENOENT ? -errno : 0; // stale: nobody listens
}

void unix_path_remember(tw_listener *l, const struct sockaddr *sa, uint32_t len)
{
    struct stat st;
    if (!path_of(sa, len, l->unix_path, sizeof l->unix_path) || stat(l->unix_path, &st) < 0) {
        l->unix_path[0] = '\0';
        return;
    }
    l->unix_dev = st.st_dev;
    l->unix_ino = st.st_ino;
}

void unix_path_remove(tw_listener *l)
{
    struct stat st;
    if (!l->unix_path[0] || stat(l->unix_path, &st) < 0) return;
    if (st.st_dev == l->unix_dev && st.st_ino == l->unix_ino) unlink(l->unix_path);
}

} // namespace twinwire::tcp
