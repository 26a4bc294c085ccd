// SPDX-License-Identifier: MIT
#include <twinwire/config.hpp>
#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>

#include "log_limiter.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <utility>
#include <system_error>
#include <sys/stat.h>
#include <unistd.h>

namespace twinwire {

LogLevel parse_log_level(const std::string &text)
{
    if (text == "error") return LogLevel::Error;
    if (text == "warn" || text == "warning") return LogLevel::Warn;
    if (text == "info") return LogLevel::Info;
    if (text == "debug") return LogLevel::Debug;
    if (text == "trace") return LogLevel::Trace;
    throw ConfigError("unknown log level '" + text + "' (expected error, warn, info, debug or trace)");
}

const char *to_string(LogLevel level)
{
    switch (level) {
    case LogLevel::Error:
        return "ERROR";
    case LogLevel::Warn:
        return "WARN";
    case LogLevel::Info:
        return "INFO";
    case LogLevel::Debug:
        return "DEBUG";
    case LogLevel::Trace:
        return "TRACE";
    }
    return "?";
}

namespace log {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::Info)};
std::mutex g_mutex;     // guards g_file, g_path, g_sink
FILE *g_file = nullptr; // nullptr = stderr
std::string g_path;
Sink g_sink = nullptr;
void *g_sink_arg = nullptr;
RateLimiter g_limiter; // guarded by g_mutex
std::string g_ident;   // guarded by g_mutex; "" = the program's name

FILE *open_log(const std::string &path)
{
    FILE *f = std::fopen(path.c_str(), "ae");
    if (!f) throw std::system_error(errno, std::generic_category(), "cannot open log file " + path);
    std::setvbuf(f, nullptr, _IOLBF, 0);
    return f;
}

size_t format_time(char *out, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
    n += static_cast<size_t>(snprintf(out + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000));
    return n;
}

// syslog priorities, as sd-daemon(3) prefixes read by journald.
int journal_priority(LogLevel lvl)
{
    switch (lvl) {
    case LogLevel::Error:
        return 3;
    case LogLevel::Warn:
        return 4;
    case LogLevel::Info:
        return 6;
    default:
        return 7;
    }
}

// JOURNAL_STREAM is "DEV:INO" of the stream systemd connected stderr to
// (read once: the environment is the one the process started with).  It may
// be inherited by a process whose stderr went elsewhere since, so stderr is
// compared on every line.
bool stderr_is_journal()
{
    static const std::pair<unsigned long long, unsigned long long> stream = [] {
        const char *text = getenv("JOURNAL_STREAM");
        unsigned long long dev = 0, ino = 0;
        if (!text || sscanf(text, "%llu:%llu", &dev, &ino) != 2) return std::make_pair(0ull, 0ull);
        return std::make_pair(dev, ino);
    }();
    const auto [dev, ino] = stream;
    if (dev == 0 && ino == 0) return false;
    struct stat st;
    if (fstat(STDERR_FILENO, &st) != 0) return false;
    return static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
}

const char *ident_locked() { return g_ident.empty() ? program_invocation_short_name : g_ident.c_str(); }

} // namespace

void set_ident(const std::string &ident)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_ident = ident;
}

std::string ident()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    return ident_locked();
}

bool writing_to_journal()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    return !g_file && stderr_is_journal();
}

void set_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }
bool enabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed); }

void set_file(const std::string &path)
{
    FILE *f = path.empty() ? nullptr : open_log(path);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_file) std::fclose(g_file);
    g_file = f;
    g_path = path;
}

bool reopen()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_path.empty()) return true;
    FILE *f = std::fopen(g_path.c_str(), "ae");
    if (!f) return false;
    std::setvbuf(f, nullptr, _IOLBF, 0);
    if (g_file) std::fclose(g_file);
    g_file = f;
    return true;
}

void set_sink(Sink sink, void *arg)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_sink = sink;
    g_sink_arg = arg;
}

void set_rate_limit(unsigned lines, unsigned seconds)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_limiter.configure(lines, seconds);
}

void reset_rate_limits()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_limiter.reset();
}

void vwrite(LogLevel lvl, const char *source, const char *fmt, va_list ap)
{
    if (!enabled(lvl)) return;
    char raw[2048];
    vsnprintf(raw, sizeof raw, fmt, ap);
    // Messages quote what peers send: never let a byte of it reach the log
    // file as a control character, a line break or an escape sequence.
    char msg[2048 * 4 + 64];
    size_t n = escape_nonprintable(raw, strlen(raw), msg, sizeof msg - 64, false);
    const char *src = source ? source : "-";
    uint64_t now = monotonic_ns();
    std::lock_guard<std::mutex> lock(g_mutex);
    // Debug and trace are asked for; the levels above are what a flood of
    // misbehaving peers would otherwise write without end.
    if (lvl <= LogLevel::Info) {
        uint64_t suppressed = 0;
        if (!g_limiter.admit(src, msg, now, &suppressed)) return;
        if (suppressed)
            snprintf(msg + n, sizeof msg - n, " (%llu similar lines suppressed)",
                     static_cast<unsigned long long>(suppressed));
    }
    char line[sizeof msg + 160];
    if (!g_file && stderr_is_journal()) {
        snprintf(line, sizeof line, "<%d>%s [%s] %s\n", journal_priority(lvl), to_string(lvl), src, msg);
    } else {
        char when[40];
        format_time(when, sizeof when);
        snprintf(line, sizeof line, "%s %s[%d] %s [%s] %s\n", when, ident_locked(), static_cast<int>(getpid()),
                 to_string(lvl), src, msg);
    }
    std::fputs(line, g_file ? g_file : stderr); // one write: lines from threads never interleave
    if (g_sink) g_sink(lvl, src, msg, g_sink_arg);
}

std::string printable(std::string_view bytes, size_t max)
{
    bool cut = bytes.size() > max;
    if (cut) bytes = bytes.substr(0, max);
    std::string out(bytes.size() * 4 + 1, '\0');
    out.resize(escape_nonprintable(bytes.data(), bytes.size(), out.data(), out.size(), true));
    if (cut) out += "...";
    return out;
}

void write(LogLevel lvl, const char *source, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwrite(lvl, source, fmt, ap);
    va_end(ap);
}

} // namespace log
} // namespace twinwire
