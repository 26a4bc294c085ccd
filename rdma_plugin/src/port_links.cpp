// SPDX-License-Identifier: MIT
#include "port_links.hpp"

#include "report.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <ifaddrs.h>
#include <net/if.h>

namespace twrdma {
namespace {

struct Speed {
    uint8_t code;
    double gbps; ///< per lane
    const char *name;
};

// IBTA encodings of ibv_port_attr.active_speed and active_width, with the
// nominal lane rates ibv_devinfo prints.
const Speed kSpeeds[] = {{1, 2.5, "SDR"},   {2, 5.0, "DDR"},   {4, 10.0, "QDR"},  {8, 10.0, "FDR10"},
                         {16, 14.0, "FDR"}, {32, 25.0, "EDR"}, {64, 50.0, "HDR"}, {128, 100.0, "NDR"}};
const struct {
    uint8_t code;
    unsigned lanes;
} kWidths[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}};

// Prefix length of a netmask: the number of leading one bits.
unsigned prefix_length(const sockaddr *mask)
{
    const uint8_t *bytes = nullptr;
    size_t len = 0;
    if (mask && mask->sa_family == AF_INET) {
        bytes = reinterpret_cast<const uint8_t *>(&reinterpret_cast<const sockaddr_in *>(mask)->sin_addr);
        len = 4;
    } else if (mask && mask->sa_family == AF_INET6) {
        bytes = reinterpret_cast<const sockaddr_in6 *>(mask)->sin6_addr.s6_addr;
        len = 16;
    }
    unsigned bits = 0;
    for (size_t i = 0; i < len; ++i)
        for (int b = 7; b >= 0 && (bytes[i] >> b) & 1; --b) ++bits;
    return bits;
}

} // namespace

std::string link_rate_text(uint8_t active_width, uint8_t active_speed)
{
    const Speed *speed = nullptr;
    for (const Speed &s : kSpeeds)
        if (s.code == active_speed) speed = &s;
    unsigned lanes = 0;
    for (const auto &w : kWidths)
        if (w.code == active_width) lanes = w.lanes;
    std::string out =
        speed ? format("speed %.1f Gb/s (%s)", speed->gbps, speed->name) : format("speed unknown (%u)", active_speed);
    out += lanes ? format(" width %uX", lanes) : format(" width unknown (%u)", active_width);
    if (speed && lanes) out += format(" (%.1f Gb/s)", speed->gbps * lanes);
    return out;
}

std::string netdev_text(uint32_t ifindex)
{
    char name[IF_NAMESIZE] = "";
    if (ifindex == 0) return "";
    if (!if_indextoname(ifindex, name)) return format("ifindex %u (gone)", ifindex);
    std::string out = name;
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return out + " (addresses unknown: " + call_failed("getifaddrs", errno) + ")";
    for (const ifaddrs *a = list; a; a = a->ifa_next) {
        if (!a->ifa_addr || std::string(a->ifa_name) != name) continue;
        char text[INET6_ADDRSTRLEN] = "";
        const void *addr = nullptr;
        if (a->ifa_addr->sa_family == AF_INET) addr = &reinterpret_cast<const sockaddr_in *>(a->ifa_addr)->sin_addr;
        if (a->ifa_addr->sa_family == AF_INET6) addr = &reinterpret_cast<const sockaddr_in6 *>(a->ifa_addr)->sin6_addr;
        if (!addr || !inet_ntop(a->ifa_addr->sa_family, addr, text, sizeof text)) continue;
        out += format(" %s/%u", text, prefix_length(a->ifa_netmask));
    }
    freeifaddrs(list);
    return out;
}

} // namespace twrdma
