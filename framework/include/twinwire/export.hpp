// SPDX-License-Identifier: MIT
// TW_API marks what libtwinwire exports.  The library is built with hidden
// visibility: a class or function of a public header is part of the API only
// with TW_API (on a class it exports every member, present and future).
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define TW_API __attribute__((visibility("default")))
#else
#define TW_API
#endif
