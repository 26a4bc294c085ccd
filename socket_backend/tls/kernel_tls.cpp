// SPDX-License-Identifier: MIT
// Whether the kernel can take the record layer (kTLS), and what the
// sessions did with it, for probe and describe: twinwire-info says which,
// and why not.
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

bool kernel_offers_tls() { return has_word(available_ulps(), "tls") || access("/sys/module/tls", F_OK) == 0; }

std::string kernel_tls_status(const tw_transport *t)
{
    if (!kernel_offers_tls()) {
        const std::string ulps = available_ulps();
        return "unavailable: this kernel offers no tls ULP (tcp_available_ulp: " + (ulps.empty() ? "none" : ulps) +
               (module_on_disk() ? "; the tls module is on disk but not loaded: `modprobe tls`, or list it in "
                                   "/etc/modules-load.d/, lets TLS 1.2 sessions use it (only a process with "
                                   "CAP_NET_ADMIN makes the kernel load it itself)"
                                 : "; no tls module") +
               ")";
    }
    if (!t)
        return "available: this kernel offers the tls ULP; TLS 1.2 sessions over tls.inner = tcp hand it their "
               "records unless tls.ktls = off";
    if (!t->settings.ktls) return "off: tls.ktls = off (this kernel offers the tls ULP)";
    if (t->settings.inner != "tcp")
        return "not used: this kernel offers the tls ULP, but tls.inner = " + t->settings.inner +
               " is not tcp (records are sealed in user space, over memory BIOs)";
    const Totals &n = t->totals;
    return "in use for TLS 1.2: " + std::to_string(n.direct.load()) +
           " sessions on the socket; the kernel seals the records of " + std::to_string(n.ktls_send.load()) +
           " and opens those of " + std::to_string(n.ktls_receive.load()) +
           " (TLS 1.3 stays in user space: OpenSSL cannot give the kernel the new keys a peer's KeyUpdate asks for)";
}

} // namespace tls
