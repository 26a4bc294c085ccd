// SPDX-License-Identifier: MIT
#pragma once

#include <string>

/// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string &text);
