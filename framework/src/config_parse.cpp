// SPDX-License-Identifier: MIT
#include "config_parse.hpp"

#include <twinwire/config.hpp>
#include <twinwire/log.hpp>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace twinwire {
namespace {

std::string trim(const std::string &s)
{
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

bool valid_key(const std::string &key)
{
    if (key.empty()) return false;
    for (char c : key)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
    return true;
}

// A value may be "quoted"; otherwise a '#' or ';' after white space starts a comment.
std::string parse_value(const std::string &raw, const std::string &where)
{
    std::string v = trim(raw);
    if (!v.empty() && v[0] == '"') {
        size_t end = v.find('"', 1);
        if (end == std::string::npos) throw ConfigError(where + ": unterminated quoted value");
        std::string rest = trim(v.substr(end + 1));
        if (!rest.empty() && rest[0] != '#' && rest[0] != ';')
            throw ConfigError(where + ": text after a quoted value: " + quoted(rest));
        return v.substr(1, end - 1);
    }
    for (size_t i = 1; i < v.size(); ++i)
        if ((v[i] == '#' || v[i] == ';') && (v[i - 1] == ' ' || v[i - 1] == '\t')) return trim(v.substr(0, i));
    return v;
}

} // namespace

std::vector<IniEntry> parse_ini(const std::string &text, const std::string &name)
{
    std::vector<IniEntry> out;
    std::istringstream in(text);
    std::string raw, prefix;
    int line = 0;
    while (std::getline(in, raw)) {
        ++line;
        std::string where = name + ":" + std::to_string(line);
        // A NUL would end the value for every C-string reader of it, silently.
        if (raw.find('\0') != std::string::npos) throw ConfigError(where + ": NUL byte in the line");
        std::string s = trim(raw);
        if (s.empty() || s[0] == '#' || s[0] == ';') continue;
        if (s[0] == '[') {
            if (s.back() != ']') throw ConfigError(where + ": expected '[section]', got " + quoted(s));
            std::string section = trim(s.substr(1, s.size() - 2));
            if (!section.empty() && !valid_key(section))
                throw ConfigError(where + ": bad section name " + quoted(section));
            prefix = (section.empty() || section == "twinwire") ? "" : section + ".";
            continue;
        }
        size_t eq = s.find('=');
        if (eq == std::string::npos) throw ConfigError(where + ": expected 'key = value', got " + quoted(s));
        std::string key = trim(s.substr(0, eq));
        if (!valid_key(key)) throw ConfigError(where + ": bad key name " + quoted(key));
        out.push_back(IniEntry{prefix + key, parse_value(s.substr(eq + 1), where), line});
    }
    return out;
}

std::optional<int64_t> parse_integer(const std::string &text)
{
    if (text.empty()) return std::nullopt;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
    return static_cast<int64_t>(v);
}

std::optional<uint64_t> parse_size(const std::string &text)
{
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0) return std::nullopt;
    std::string unit(end);
    unsigned shift = 0;
    if (unit.empty() || unit == "B") shift = 0;
    else if (unit == "k" || unit == "K" || unit == "KiB" || unit == "KB") shift = 10;
    else if (unit == "m" || unit == "M" || unit == "MiB" || unit == "MB") shift = 20;
    else if (unit == "g" || unit == "G" || unit == "GiB" || unit == "GB") shift = 30;
    else return std::nullopt;
    if (shift && v > (~0ull >> shift)) return std::nullopt;
    return static_cast<uint64_t>(v) << shift;
}

std::string format_size(uint64_t bytes)
{
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string quoted(const std::string &text)
{
    constexpr size_t shown = 64;
    std::string out = "'" + log::printable(std::string_view(text).substr(0, shown), shown) + "'";
    if (text.size() > shown) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

std::optional<bool> parse_bool(const std::string &text)
{
    if (text == "yes" || text == "true" || text == "on" || text == "1") return true;
    if (text == "no" || text == "false" || text == "off" || text == "0") return false;
    return std::nullopt;
}

} // namespace twinwire
