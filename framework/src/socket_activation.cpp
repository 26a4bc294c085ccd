// SPDX-License-Identifier: MIT
#include "socket_activation.hpp"

#include <twinwire/log.hpp>

#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace twinwire {
namespace {

constexpr int kFirstPassedFd = 3; // SD_LISTEN_FDS_START

bool parse_count(const char *text, long max, long *out)
{
    if (!text || !*text) return false;
    char *end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (*end || v < 0 || v > max) return false;
    *out = v;
    return true;
}

} // namespace

std::vector<PassedSocket> take_passed_sockets()
{
    std::vector<PassedSocket> out;
    const char *pid_text = std::getenv("LISTEN_PID");
    const char *fds_text = std::getenv("LISTEN_FDS");
    if (!pid_text || !fds_text || getauxval(AT_SECURE)) return out;
    long pid = 0, count = 0;
    bool ours = parse_count(pid_text, 1L << 30, &pid) && pid == getpid();
    if (ours && !parse_count(fds_text, 1024, &count))
        TW_WARN("listen", "LISTEN_FDS='%s' is not a number of sockets; ignoring socket activation", fds_text);
    std::string names = std::getenv("LISTEN_FDNAMES") ? std::getenv("LISTEN_FDNAMES") : "";
    // Not for our children, whatever happens next.
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (!ours) return out;
    size_t start = 0;
    for (long i = 0; i < count; ++i) {
        int fd = kFirstPassedFd + static_cast<int>(i);
        std::string name = "unknown";
        if (start <= names.size() && !names.empty()) {
            size_t colon = names.find(':', start);
            name = names.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
            start = colon == std::string::npos ? names.size() + 1 : colon + 1;
        }
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
            TW_WARN("listen", "socket activation: fd %d ('%s') is not open; skipped", fd, name.c_str());
            continue;
        }
        out.push_back(PassedSocket{fd, name});
    }
    return out;
}

} // namespace twinwire
