// SPDX-License-Identifier: MIT
#include "json_text.hpp"

#include <cstdio>

std::string json_string(const std::string &text)
{
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string json_list(const std::vector<std::string> &items)
{
    std::string out;
    for (const auto &i : items) out += (out.empty() ? "" : ", ") + json_string(i);
    return "[" + out + "]";
}
