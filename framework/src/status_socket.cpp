// SPDX-License-Identifier: MIT
#include "status_socket.hpp"

#include <twinwire/error.hpp>
#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>

#include <event2/event.h>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace twinwire {
namespace {

[[noreturn]] void refuse(const std::string &path, const std::string &why)
{
    throw StartupError(errc::bad_config, "status_socket = " + path + ": " + why);
}

sockaddr_un address_of(const std::string &path)
{
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    if (path.size() >= sizeof un.sun_path) refuse(path, "longer than a Unix socket path can be");
    std::memcpy(un.sun_path, path.c_str(), path.size() + 1);
    return un;
}

// A socket file left by a daemon that died is replaced; one a live daemon
// answers on, or a file of another kind, is not ours to remove.
void clear_stale(const std::string &path, const sockaddr_un &un)
{
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return;
    if (!S_ISSOCK(st.st_mode)) refuse(path, "exists and is not a socket");
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = probe >= 0 && connect(probe, reinterpret_cast<const sockaddr *>(&un), sizeof un) == 0;
    if (probe >= 0) close(probe);
    if (live) refuse(path, "another process answers there (a second daemon with the same configuration?)");
    unlink(path.c_str());
}

} // namespace

StatusSocket::StatusSocket(Loop &loop, std::string path, std::function<std::string()> report)
    : path_(std::move(path)), report_(std::move(report))
{
    sockaddr_un un = address_of(path_);
    clear_stale(path_, un);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) refuse(path_, std::string("socket: ") + strerror(errno));
    // Owner only: connection counts and addresses are the operator's to read.
    mode_t old = umask(077);
    int rc = bind(fd_, reinterpret_cast<const sockaddr *>(&un), sizeof un);
    int err = errno;
    umask(old);
    if (rc != 0 || listen(fd_, 16) != 0) {
        if (rc == 0) err = errno;
        close(fd_);
        refuse(path_, std::string(rc != 0 ? "bind: " : "listen: ") + strerror(err) +
                          (err == ENOENT ? " (does its directory exist?)" : ""));
    }
    event_ = event_new(loop.base(), fd_, EV_READ | EV_PERSIST, on_readable, this);
    if (!event_ || event_add(event_, nullptr) != 0) {
        if (event_) event_free(event_);
        close(fd_);
        unlink(path_.c_str());
        refuse(path_, "libevent could not watch it");
    }
    TW_INFO("runtime", "status on %s (twinwire-info --status %s)", path_.c_str(), path_.c_str());
}

StatusSocket::~StatusSocket()
{
    event_free(event_);
    close(fd_);
    unlink(path_.c_str());
}

void StatusSocket::on_readable(int fd, short, void *arg)
{
    auto *self = static_cast<StatusSocket *>(arg);
    // The report is small (a line per transport): one send, then close; a
    // reader that does not read loses its answer, never the loop's time.
    for (int i = 0; i < 16; ++i) {
        int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) return;
        std::string text = self->report_();
        (void)send(c, text.data(), text.size(), MSG_NOSIGNAL);
        close(c);
    }
}

} // namespace twinwire
