// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

/// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string &text);

/// `items` as a JSON array of strings.
std::string json_list(const std::vector<std::string> &items);
