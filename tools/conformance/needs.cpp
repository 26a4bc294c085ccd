// SPDX-License-Identifier: MIT
#include "needs.hpp"

#include "context.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <mutex>

namespace twinwire::conformance {
namespace {

std::mutex g_mutex;
std::map<std::string, std::string> g_skipped; // case name -> why

} // namespace

Need need_operation(const char *member, size_t offset)
{
    const tw_transport_ops *raw = plugin_ops();
    bool present = false;
    // A member exists only when the plugin's table is long enough to hold it.
    if (raw && raw->size >= offset + sizeof(void (*)())) {
        void (*fn)() = nullptr;
        std::memcpy(&fn, reinterpret_cast<const char *>(raw) + offset, sizeof fn);
        present = fn != nullptr;
    }
    return {std::string("operation ") + member, present};
}

Need need_capability(uint64_t cap, const char *cap_name)
{
    return {std::string("capability ") + cap_name, (transport().caps() & cap) != 0};
}

Need need_no_capability(uint64_t cap, const char *cap_name)
{
    return {std::string("a transport without ") + cap_name, (transport().caps() & cap) == 0};
}

Need need_context(bool met, std::string what) { return {std::move(what), met}; }

bool skip_unless(std::initializer_list<Need> needs)
{
    std::string missing;
    for (const Need &n : needs)
        if (!n.met) missing += (missing.empty() ? "needs " : ", ") + n.what;
    if (missing.empty()) return false;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_skipped[Catch::getResultCapture().getCurrentTestName()] = missing;
    return true;
}

const std::string *skip_reason(const std::string &name)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_skipped.find(name);
    return it == g_skipped.end() ? nullptr : &it->second;
}

} // namespace twinwire::conformance
