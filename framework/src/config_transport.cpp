// SPDX-License-Identifier: MIT
// The `transport` setting (auto, one name, or a list) and the keys that
// belong to transports ("NAME.key").
#include "config_impl.hpp"
#include "config_parse.hpp"

#include <twinwire/config.hpp>

#include <algorithm>
#include <set>

namespace twinwire {

std::string check_transport_name(const std::string &name)
{
    if (name.empty()) return "an empty transport name";
    if (name.size() > 32) return "transport name " + quoted(name) + " is longer than 32 characters";
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return "transport name " + quoted(name) + " has a character other than a-z, 0-9 and _";
    return {};
}

std::vector<std::string> parse_transport_list(const std::string &text)
{
    std::vector<std::string> names;
    size_t start = 0;
    while (true) {
        size_t comma = text.find(',', start);
        std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        std::string why = check_transport_name(name);
        if (!why.empty()) throw ConfigError("expected auto, tcp, a transport name or a list of names: " + why);
        if (std::find(names.begin(), names.end(), name) != names.end())
            throw ConfigError("transport " + quoted(name) + " is listed twice");
        names.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (names.size() > 1 && std::find(names.begin(), names.end(), "auto") != names.end())
        throw ConfigError("auto stands alone: it cannot be part of a list");
    return names;
}

std::string Config::transport() const { return get("transport"); }

std::vector<std::string> Config::transport_list() const { return parse_transport_list(transport()); }

// "foo.bar" is a transport's key unless "foo." is an application's prefix
// ("kvd.maxclients" makes every "kvd.*" key an application key).
bool Config::Impl::is_transport_key(const std::string &key) const
{
    size_t dot = key.find('.');
    if (dot == std::string::npos || dot + 1 == key.size()) return false;
    std::string name = key.substr(0, dot);
    if (name == "auto" || !check_transport_name(name).empty()) return false;
    const std::string prefix = name + ".";
    auto it = schema.lower_bound(prefix);
    return it == schema.end() || it->first.compare(0, prefix.size(), prefix) != 0;
}

std::vector<std::string> Config::transport_key_names() const
{
    const Impl &d = Impl::read(*this);
    std::set<std::string> names;
    for (const auto &entry : d.values)
        if (!d.schema.count(entry.first) && d.is_transport_key(entry.first))
            names.insert(entry.first.substr(0, entry.first.find('.')));
    return {names.begin(), names.end()};
}

} // namespace twinwire
