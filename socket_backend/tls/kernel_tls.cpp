// SPDX-License-Identifier: MIT
// Whether the kernel could take the record layer (kTLS), for probe and
// describe: twinwire-info says why it is not used.
#include "tls.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace tls {
namespace {

std::string available_ulps()
{
    std::ifstream in("/proc/sys/net/ipv4/tcp_available_ulp");
    std::string line;
    std::getline(in, line);
    return in ? line : "unreadable";
}

bool has_word(const std::string &list, const std::string &word)
{
    size_t at = 0;
    while ((at = list.find(word, at)) != std::string::npos) {
        bool starts = at == 0 || list[at - 1] == ' ';
        bool ends = at + word.size() == list.size() || list[at + word.size()] == ' ';
        if (starts && ends) return true;
        at += word.size();
    }
    return false;
}

bool module_on_disk()
{
    utsname u{};
    if (uname(&u) != 0) return false;
    const std::string dir = std::string("/lib/modules/") + u.release + "/kernel/net/tls/";
    for (const char *name : {"tls.ko", "tls.ko.xz", "tls.ko.zst"})
        if (access((dir + name).c_str(), R_OK) == 0) return true;
    return false;
}

} // namespace

std::string kernel_tls_status()
{
    const std::string ulps = available_ulps();
    if (has_word(ulps, "tls") || access("/sys/module/tls", F_OK) == 0)
        return "not used: this kernel offers the tls ULP, but the plugin seals records in user space (OpenSSL "
               "over memory BIOs, so that it runs over any inner transport)";
    return "unavailable: this kernel offers no tls ULP (tcp_available_ulp: " + (ulps.empty() ? "none" : ulps) +
           (module_on_disk() ? "; the tls module is on disk but not loaded" : "; no tls module") + ")";
}

} // namespace tls
