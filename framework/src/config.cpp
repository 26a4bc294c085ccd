// SPDX-License-Identifier: MIT
#include "config_impl.hpp"
#include "config_parse.hpp"

#include <twinwire/config.hpp>
#include <twinwire/log.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/auxv.h>

extern char **environ;

namespace twinwire {

namespace check {

std::function<std::string(const std::string &)> integer(int64_t min, int64_t max)
{
    return [min, max](const std::string &v) -> std::string {
        auto n = parse_integer(v);
        if (!n || *n < min || *n > max)
            return "expected an integer " + std::to_string(min) + ".." + std::to_string(max);
        return {};
    };
}

std::function<std::string(const std::string &)> size_bytes(uint64_t min, uint64_t max)
{
    return [min, max](const std::string &v) -> std::string {
        auto n = parse_size(v);
        if (!n || *n < min || *n > max)
            return "expected a size " + format_size(min) + ".." + format_size(max) + " (bytes, or with k, M, G)";
        return {};
    };
}

std::function<std::string(const std::string &)> one_of(std::vector<std::string> values)
{
    return [values](const std::string &v) -> std::string {
        if (std::find(values.begin(), values.end(), v) != values.end()) return {};
        std::string all;
        for (const auto &x : values) all += (all.empty() ? "" : ", ") + x;
        return "expected one of " + all;
    };
}

std::function<std::string(const std::string &)> boolean()
{
    return [](const std::string &v) -> std::string {
        return parse_bool(v) ? std::string() : std::string("expected yes or no (true/false, on/off, 1/0)");
    };
}

std::function<std::string(const std::string &)> any()
{
    return [](const std::string &) { return std::string(); };
}

std::function<std::string(const std::string &)> absolute_path_or_empty()
{
    return [](const std::string &v) -> std::string {
        return v.empty() || v[0] == '/' ? std::string() : std::string("expected an absolute path");
    };
}

std::function<std::string(const std::string &)> absolute_path_list_or_empty()
{
    return [](const std::string &v) -> std::string {
        size_t start = 0;
        while (!v.empty()) {
            size_t colon = v.find(':', start);
            std::string entry = v.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
            if (entry.empty() || entry[0] != '/')
                return "expected absolute paths separated by ':' (" + quoted(entry) + " is not one)";
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
        return {};
    };
}

} // namespace check

Config::Config() : impl_(std::make_unique<Impl>())
{
    auto key = [this](const char *name, const char *def, const char *help,
                      std::function<std::string(const std::string &)> chk) {
        define(ConfigKey{name, def, help, std::move(chk)});
    };
    key("transport", "auto",
        "auto: RDMA when usable, else TCP; tcp; NAME: that transport or refuse to start; NAME,NAME,...: the first "
        "that loads, the rest as fallbacks",
        [](const std::string &v) -> std::string {
            try {
                parse_transport_list(v);
            } catch (const ConfigError &e) {
                return e.what();
            }
            return {};
        });
    key("plugin_path", "",
        "where plugins are looked for: absolute directories separated by ':', or one plugin file; empty: the "
        "installed plugin directory (environment: TWINWIRE_PLUGIN_PATH)",
        check::absolute_path_list_or_empty());
    key("listen_address", "127.0.0.1",
        "address to listen on: IPv4, IPv6, a host name (every address it has), * (IPv6 and IPv4), unix:/path or "
        "unix:@name",
        check::any());
    key("unix_mode", "",
        "permissions of a Unix socket file the listener creates, octal (0660); empty: as the umask leaves them",
        [](const std::string &v) -> std::string {
            if (v.empty()) return {};
            if (v.size() > 4 || v.find_first_not_of("01234567") != std::string::npos)
                return "expected octal permissions such as 0660";
            return {};
        });
    key("unix_owner", "", "owner of a Unix socket file the listener creates: user, user:group or :group", check::any());
    key("socket_activation", "yes",
        "take the listening sockets a service manager passes (LISTEN_FDS) instead of binding", check::boolean());
    key("listen_port", "7379", "port to listen on (0: any free port)", check::integer(0, 65535));
    key("threads", "1", "event-loop threads; connections are spread across them", check::integer(1, 256));
    key("listen_backlog", "511", "pending-connection queue of listeners", check::integer(1, 65535));
    key("connect_timeout_ms", "3000", "give up a client connect after this", check::integer(1, 600000));
    key("shutdown_timeout_ms", "5000", "how long a graceful stop lets connections flush", check::integer(0, 600000));
    key("read_buffer_size", "64k", "bytes read from the transport per read call", check::size_bytes(512, 16u << 20));
    key("write_buffer_limit", "64M", "output queued per connection before writes are refused",
        check::size_bytes(4096, uint64_t(16) << 30));
    key("write_high_watermark", "1M",
        "output queued above which a connection reports write_blocked() (writes still succeed up to "
        "write_buffer_limit)",
        check::size_bytes(1, uint64_t(16) << 30));
    key("write_low_watermark", "256k", "once above the high watermark, on_write_low runs when the output falls to this",
        check::size_bytes(0, uint64_t(16) << 30));
    key("read_timeout_ms", "0", "close a connection that receives nothing for this long while reading (0: off)",
        check::integer(0, 86400000));
    key("write_timeout_ms", "0", "close a connection whose queued output makes no progress for this long (0: off)",
        check::integer(0, 86400000));
    key("idle_timeout_ms", "0", "close a connection with no traffic either way for this long (0: off)",
        check::integer(0, 86400000));
    key("status_socket", "",
        "a Unix socket path where the running program answers twinwire-info --status (transports, listening "
        "addresses, open connections); empty: none",
        [](const std::string &v) -> std::string {
            if (v.empty()) return {};
            if (v[0] != '/') return "expected an absolute path";
            if (v.size() >= 108) return "expected at most 107 characters (a Unix socket path)";
            return {};
        });
    key("log_level", "info", "error, warn, info, debug or trace",
        check::one_of({"error", "warn", "info", "debug", "trace"}));
    key("log_file", "", "append the log to this file; empty: stderr", check::any());
    key("log_ident", "", "the name log lines carry; empty: the program's name", [](const std::string &v) {
        for (unsigned char ch : v)
            if (ch <= ' ' || ch >= 0x7f || ch == '[' || ch == ']')
                return std::string("expected printable characters without spaces or brackets");
        return v.size() > 64 ? std::string("expected at most 64 characters") : std::string();
    });
}

Config::~Config() = default;
Config::Config(const Config &other) : impl_(std::make_unique<Impl>(Impl::read(other))) {}
Config::Config(Config &&other) noexcept = default;
Config &Config::operator=(Config &&other) noexcept = default;

Config &Config::operator=(const Config &other)
{
    if (this != &other) impl_ = std::make_unique<Impl>(Impl::read(other));
    return *this;
}

void Config::define(ConfigKey key)
{
    Impl &d = Impl::write(*this);
    if (!key.check) key.check = check::any();
    std::string name = key.name;
    if (!key.default_value.empty()) {
        std::string why = key.check(key.default_value);
        if (!why.empty()) throw ConfigError("default of '" + name + "' is invalid: " + why);
        d.values[name] = ConfigValue{key.default_value, "default"};
    }
    d.schema[name] = std::move(key);
}

void Config::Impl::assign(const std::string &key, const std::string &value, const std::string &origin)
{
    if (value.find('\0') != std::string::npos) throw ConfigError(origin + ": NUL byte in the value of " + quoted(key));
    auto it = schema.find(key);
    if (it == schema.end()) {
        if (!is_transport_key(key))
            throw ConfigError(errc::unknown_config_key, origin + ": unknown key " + quoted(key));
    } else {
        std::string why = it->second.check(value);
        if (!why.empty())
            throw ConfigError(origin + ": bad value " + quoted(value) + " for " + quoted(key) + ": " + why);
    }
    values[key] = ConfigValue{value, origin};
}

namespace {

// "a FIFO" for the message that refuses anything but a regular file.
const char *file_type(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

} // namespace

// Only a regular file of bounded size: /dev/zero would be read forever, and a
// FIFO with no writer would block open().  O_NONBLOCK makes that open return
// at once, so fstat can refuse it; O_NOCTTY keeps a terminal from becoming
// ours.
void Config::load_file(const std::string &path)
{
    auto fail = [&path](const std::string &what, int err) {
        throw ConfigError(std::error_code(err, std::generic_category()),
                          path + ": " + what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")");
    };
    auto refuse = [&path](mode_t mode) {
        throw ConfigError(path + ": is " + file_type(mode) + "; a configuration file must be a regular file");
    };
    auto too_large = [&path](const std::string &size) {
        throw ConfigError(path + ": is " + size + " bytes; a configuration file must be at most " +
                          format_size(max_file_size) + " (" + std::to_string(max_file_size) + " bytes)");
    };
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        struct stat st;
        // A socket cannot be opened at all (ENXIO): say what it is instead.
        if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) refuse(st.st_mode);
        fail("cannot open configuration file", err);
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st;
    if (fstat(fd, &st) != 0) fail("cannot read configuration file", errno);
    if (!S_ISREG(st.st_mode)) refuse(st.st_mode);
    if (static_cast<uint64_t>(st.st_size) > max_file_size) too_large(std::to_string(st.st_size));
    // The size can grow while we read, and some files report 0: read one byte
    // past the cap at most.
    std::string text(max_file_size + 1, '\0');
    size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd, &text[got], text.size() - got);
        if (n == 0) break;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("cannot read configuration file", errno);
        got += static_cast<size_t>(n);
    }
    if (got > max_file_size) too_large("more than " + std::to_string(max_file_size));
    text.resize(got);
    load_string(text, path);
}

void Config::load_string(const std::string &text, const std::string &name)
{
    Impl &d = Impl::write(*this);
    for (const IniEntry &e : parse_ini(text, name)) d.assign(e.key, e.value, name + ":" + std::to_string(e.line));
}

void Config::load_environment()
{
    // A setuid/setgid program (AT_SECURE) takes nothing from the environment
    // its caller chose: no plugin path, no log file, no setting at all.
    // Names are matched whatever their case, as they are lowercased below.
    const bool secure = getauxval(AT_SECURE) != 0;
    std::vector<std::pair<std::string, std::string>> vars;
    std::string ignored;
    for (char **env = environ; env && *env; ++env) {
        std::string var(*env);
        auto eq = var.find('=');
        if (eq == std::string::npos || eq < 9) continue;
        std::string name = var.substr(0, eq);
        std::string prefix = name.substr(0, 9);
        for (char &c : prefix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (prefix != "TWINWIRE_") continue;
        if (secure) ignored += (ignored.empty() ? "" : ", ") + name;
        else if (name.compare(0, 9, "TWINWIRE_") == 0) vars.emplace_back(name, var.substr(eq + 1));
    }
    if (!ignored.empty()) TW_WARN("config", "ignored in a setuid/setgid program: %s", ignored.c_str());
    // The transport list first: it names the transports whose keys follow.
    std::stable_partition(vars.begin(), vars.end(), [](const auto &v) { return v.first == "TWINWIRE_TRANSPORT"; });
    Impl &d = Impl::write(*this);
    for (const auto &v : vars) d.assign(d.key_for_environment(v.first.substr(9)), v.second, "environment " + v.first);
}

// TWINWIRE_LISTEN_PORT -> listen_port; TWINWIRE_KVD_MAXCLIENTS -> kvd.maxclients
// (a schema key with a dot); TWINWIRE_RDMA_RING_SIZE -> rdma.ring_size (a
// transport's key: rdma, tcp and the transports named in `transport`).
std::string Config::Impl::key_for_environment(const std::string &suffix) const
{
    std::string lower;
    for (char c : suffix) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (schema.count(lower)) return lower;
    for (const auto &entry : schema) {
        std::string mangled = entry.first;
        std::replace(mangled.begin(), mangled.end(), '.', '_');
        if (mangled == lower) return entry.first;
    }
    std::vector<std::string> names{"rdma", "tcp"};
    try {
        auto transport = values.find("transport");
        for (const auto &n : parse_transport_list(transport == values.end() ? "" : transport->second.value))
            names.push_back(n);
    } catch (const ConfigError &) {
        // a bad list was refused when it was set
    }
    // The longest name wins: "rdma_x" before "rdma" for TWINWIRE_RDMA_X_KEY.
    std::sort(names.begin(), names.end(), [](const auto &a, const auto &b) { return a.size() > b.size(); });
    for (const auto &n : names) {
        std::string mangled = n + "_";
        if (lower.size() > mangled.size() && lower.compare(0, mangled.size(), mangled) == 0)
            return n + "." + lower.substr(mangled.size());
    }
    return lower; // assign() reports it as unknown
}

void Config::set(const std::string &key, const std::string &value, const std::string &origin)
{
    Impl::write(*this).assign(key, value, origin);
}

const ConfigValue *Config::find(const std::string &key) const
{
    const auto &values = Impl::read(*this).values;
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
}

std::string Config::get(const std::string &key) const
{
    const ConfigValue *v = find(key);
    return v ? v->value : std::string();
}

int64_t Config::get_int(const std::string &key) const
{
    auto n = parse_integer(get(key));
    if (!n) throw ConfigError("'" + key + "' is not set to an integer");
    return *n;
}

uint64_t Config::get_size(const std::string &key) const
{
    auto n = parse_size(get(key));
    if (!n) throw ConfigError("'" + key + "' is not set to a size");
    return *n;
}

bool Config::get_bool(const std::string &key) const
{
    auto b = parse_bool(get(key));
    if (!b) throw ConfigError("'" + key + "' is not set to yes or no");
    return *b;
}

std::string Config::plugin_path() const { return get("plugin_path"); }
std::string Config::listen_address() const { return get("listen_address"); }
uint16_t Config::listen_port() const { return static_cast<uint16_t>(get_int("listen_port")); }
unsigned Config::threads() const { return static_cast<unsigned>(get_int("threads")); }
int Config::listen_backlog() const { return static_cast<int>(get_int("listen_backlog")); }
uint32_t Config::connect_timeout_ms() const { return static_cast<uint32_t>(get_int("connect_timeout_ms")); }
uint32_t Config::shutdown_timeout_ms() const { return static_cast<uint32_t>(get_int("shutdown_timeout_ms")); }
size_t Config::read_buffer_size() const { return static_cast<size_t>(get_size("read_buffer_size")); }
size_t Config::write_buffer_limit() const { return static_cast<size_t>(get_size("write_buffer_limit")); }
// Defaults follow a smaller write_buffer_limit (high at most the limit, low
// a quarter of high); values set explicitly are taken as they are.
size_t Config::write_high_watermark() const
{
    size_t v = static_cast<size_t>(get_size("write_high_watermark"));
    return find("write_high_watermark")->origin == "default" ? std::min(v, write_buffer_limit()) : v;
}
size_t Config::write_low_watermark() const
{
    size_t v = static_cast<size_t>(get_size("write_low_watermark"));
    return find("write_low_watermark")->origin == "default" ? std::min(v, write_high_watermark() / 4) : v;
}
uint32_t Config::read_timeout_ms() const { return static_cast<uint32_t>(get_int("read_timeout_ms")); }
uint32_t Config::write_timeout_ms() const { return static_cast<uint32_t>(get_int("write_timeout_ms")); }
uint32_t Config::idle_timeout_ms() const { return static_cast<uint32_t>(get_int("idle_timeout_ms")); }

void Config::check_connection_settings() const
{
    const size_t low = write_low_watermark(), high = write_high_watermark(), limit = write_buffer_limit();
    if (low >= high || high > limit)
        throw ConfigError("write_low_watermark (" + std::to_string(low) + ") < write_high_watermark (" +
                          std::to_string(high) + ") <= write_buffer_limit (" + std::to_string(limit) +
                          ") does not hold (bytes; " + find("write_high_watermark")->origin + ", " +
                          find("write_low_watermark")->origin + ")");
}
std::string Config::log_level() const { return get("log_level"); }
std::string Config::log_file() const { return get("log_file"); }
std::string Config::log_ident() const { return get("log_ident"); }

std::vector<std::string> Config::unknown_keys_under(const std::string &prefix,
                                                    const std::vector<std::string> &looked_up) const
{
    std::vector<std::string> unknown;
    for (const auto &entry : Impl::read(*this).values) {
        const std::string &key = entry.first;
        if (key.compare(0, prefix.size(), prefix) != 0) continue;
        if (std::find(looked_up.begin(), looked_up.end(), key) == looked_up.end())
            unknown.push_back(key + " (" + entry.second.origin + ")");
    }
    return unknown;
}

std::vector<std::pair<std::string, ConfigValue>> Config::entries() const
{
    const auto &values = Impl::read(*this).values;
    return {values.begin(), values.end()};
}

std::vector<ConfigKey> Config::schema() const
{
    std::vector<ConfigKey> out;
    for (const auto &entry : Impl::read(*this).schema) out.push_back(entry.second);
    return out;
}

} // namespace twinwire
