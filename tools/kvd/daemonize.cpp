// SPDX-License-Identifier: MIT
#include "daemonize.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace kvd {
namespace {

void point_at_dev_null(int target)
{
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    dup2(fd, target);
    close(fd);
}

[[noreturn]] void wait_for_daemon(int fd, pid_t middle)
{
    char status = 1;
    ssize_t n;
    do n = read(fd, &status, 1);
    while (n < 0 && errno == EINTR);
    waitpid(middle, nullptr, 0);
    _exit(n == 1 ? status : 1);
}

} // namespace

Daemonizer Daemonizer::detach()
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "daemonize: pipe");
    pid_t pid = fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "daemonize: fork");
    if (pid > 0) {
        close(fds[1]);
        wait_for_daemon(fds[0], pid);
    }
    close(fds[0]);
    if (setsid() < 0) _exit(1);
    // The second fork: the daemon is not a session leader, so opening a
    // terminal can never make it the controlling one.
    pid = fork();
    if (pid < 0) _exit(1);
    if (pid > 0) _exit(0);
    if (chdir("/") != 0) _exit(1);
    point_at_dev_null(STDIN_FILENO);
    return Daemonizer(fds[1]);
}

Daemonizer::Daemonizer(Daemonizer &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Daemonizer::~Daemonizer()
{
    if (fd_ >= 0) close(fd_); // EOF without a status: the waiting process exits 1
}

void Daemonizer::ready()
{
    if (fd_ < 0) return;
    point_at_dev_null(STDOUT_FILENO);
    point_at_dev_null(STDERR_FILENO);
    char ok = 0;
    ssize_t n = write(fd_, &ok, 1);
    (void)n; // the waiting process may be gone: nothing to tell then
    close(fd_);
    fd_ = -1;
}

Pidfile::Pidfile(std::string path) : path_(std::move(path))
{
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("pidfile " + path_ + ": cannot open: " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        char buf[32] = {};
        ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
        close(fd_);
        fd_ = -1;
        std::string holder = n > 0 ? std::string(buf, strcspn(buf, "\n")) : std::string("another process");
        if (err == EWOULDBLOCK)
            throw std::runtime_error("pidfile " + path_ + " is held by running process " + holder +
                                     ": is twinwire-kvd already running?");
        throw std::runtime_error("pidfile " + path_ + ": cannot lock: " + std::strerror(err));
    }
    std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        int err = errno;
        close(fd_);
        fd_ = -1;
        throw std::runtime_error("pidfile " + path_ + ": cannot write: " + std::strerror(err));
    }
}

Pidfile::~Pidfile()
{
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
}

} // namespace kvd
