// SPDX-License-Identifier: MIT
#include "netns.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace twinwire::conformance {
namespace {

std::string errno_text(const char *call) { return std::string(call) + ": " + strerror(errno); }

sockaddr ipv4(const char *text)
{
    sockaddr_in in{};
    in.sin_family = AF_INET;
    inet_pton(AF_INET, text, &in.sin_addr);
    sockaddr out;
    memcpy(&out, &in, sizeof out);
    return out;
}

} // namespace

bool enter_silent_netns(std::string *why)
{
    // Unprivileged users may still own a network namespace inside a user
    // namespace of their own, where they have CAP_NET_ADMIN.
    if (unshare(CLONE_NEWNET) < 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
        *why = errno_text("unshare(CLONE_NEWUSER | CLONE_NEWNET)") +
               " (needs root, or unprivileged user namespaces enabled)";
        return false;
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = errno_text("socket");
        return false;
    }
    auto fail = [&](const char *call) {
        *why = errno_text(call);
        close(fd);
        return false;
    };
    ifreq ifr{};
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) return fail("ioctl(SIOCGIFFLAGS, lo)");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) return fail("ioctl(SIOCSIFFLAGS, lo up)");
    // 10.88.0.0/24 dev lo: no local address there and no forwarding, so the
    // SYNs come back in on lo and are dropped.
    rtentry rt{};
    char dev[] = "lo";
    rt.rt_dst = ipv4("10.88.0.0");
    rt.rt_genmask = ipv4("255.255.255.0");
    rt.rt_flags = RTF_UP;
    rt.rt_dev = dev;
    if (ioctl(fd, SIOCADDRT, &rt) < 0) return fail("ioctl(SIOCADDRT, 10.88.0.0/24 dev lo)");
    close(fd);
    return true;
}

} // namespace twinwire::conformance
