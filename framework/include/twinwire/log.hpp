// SPDX-License-Identifier: MIT
// Process-wide logging: one line per message, with time, level and source.
#pragma once

#include <twinwire/export.hpp>

#include <twinwire/host.h>

#include <cstdarg>
#include <string>
#include <string_view>

namespace twinwire {

enum class LogLevel {
    Error = TW_LOG_ERROR,
    Warn = TW_LOG_WARN,
    Info = TW_LOG_INFO,
    Debug = TW_LOG_DEBUG,
    Trace = TW_LOG_TRACE
};

/// Parse "error", "warn", "info", "debug", "trace"; throws ConfigError otherwise.
TW_API LogLevel parse_log_level(const std::string &text);
TW_API const char *to_string(LogLevel level);

namespace log {

/// Messages below `level` are dropped (default Info).
TW_API void set_level(LogLevel level);
TW_API LogLevel level();
TW_API bool enabled(LogLevel level);

/// Write to `path` (appending) instead of stderr; "" = stderr.  Throws
/// std::system_error when the file cannot be opened.
TW_API void set_file(const std::string &path);
/// Reopen the current log file (after logrotate moved it; SIGHUP in daemons).
/// Safe to call from any thread; returns false when it could not reopen.
[[nodiscard]] TW_API bool reopen();

/// The name every line carries ("kvd[1234]"): by default the program's name
/// (program_invocation_short_name); config key log_ident.  "" = the default.
TW_API void set_ident(const std::string &ident);
TW_API std::string ident();

/// True when lines go to stderr and stderr is the systemd journal
/// (JOURNAL_STREAM names stderr's device and inode): each line then starts
/// with its syslog priority, "<3>" for errors to "<7>" for debug and trace,
/// without the time and ident the journal records itself.
TW_API bool writing_to_journal();

/// Send every line to `sink` as well (tests capture logs this way).
/// nullptr removes it.  The sink runs under the log lock: keep it short.
using Sink = void (*)(LogLevel level, const char *source, const char *line, void *arg);
TW_API void set_sink(Sink sink, void *arg);

/// Repeated lines at info, warn and error are limited: each line may appear
/// `lines` times per `seconds` (default 10 per 10 s), counting lines that
/// differ only in their digits as the same; the next one written after a
/// pause says "(N similar lines suppressed)".  All lines together are capped
/// at 20 * `lines` a second.  0 turns the limit off.  Debug and trace lines
/// are never limited.
TW_API void set_rate_limit(unsigned lines, unsigned seconds);
/// Forget what was counted so far (tests that look for a line start here).
TW_API void reset_rate_limits();

/// `bytes` as one printable line: printable ASCII as is, '\\' doubled,
/// everything else \xNN (\n, \r, \t), cut after `max` bytes with "...".
/// For quoting what a peer sent (it may hold NULs, which "%s" would cut).
/// Every message is escaped before it is written anyway (all but the
/// doubling of backslashes), so a forgotten call leaks no raw byte.
TW_API std::string printable(std::string_view bytes, size_t max = 64);

/// "2026-11-22T10:00:00.123Z IDENT[1234] INFO [source] message"; to the
/// journal "<6>INFO [source] message".
TW_API void write(LogLevel level, const char *source, const char *fmt, ...) TW_PRINTF(3, 4);
TW_API void vwrite(LogLevel level, const char *source, const char *fmt, va_list ap);

} // namespace log

#define TW_LOG(level, source, ...)                                                                                     \
    do {                                                                                                               \
        if (::twinwire::log::enabled(level)) ::twinwire::log::write(level, source, __VA_ARGS__);                       \
    } while (0)
#define TW_ERROR(src, ...) TW_LOG(::twinwire::LogLevel::Error, src, __VA_ARGS__)
#define TW_WARN(src, ...)  TW_LOG(::twinwire::LogLevel::Warn, src, __VA_ARGS__)
#define TW_INFO(src, ...)  TW_LOG(::twinwire::LogLevel::Info, src, __VA_ARGS__)
#define TW_DEBUG(src, ...) TW_LOG(::twinwire::LogLevel::Debug, src, __VA_ARGS__)

} // namespace twinwire
