// SPDX-License-Identifier: MIT
#include "rdma_test.hpp"

#include <twinwire/transport.hpp>

#include <sys/klog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace twinwire::rdmatest {

namespace {
std::mutex log_mutex;
std::string log_lines;
size_t log_warnings = 0;

void sink(LogLevel level, const char *source, const char *line, void *)
{
    if (level > LogLevel::Warn) return;
    log_warnings++;
    log_lines += std::string(source ? source : "") + ": " + line + "\n";
}
} // namespace

LogWatch::LogWatch()
{
    std::lock_guard<std::mutex> lock(log_mutex);
    log_lines.clear();
    log_warnings = 0;
    log::set_sink(sink, nullptr);
}

LogWatch::~LogWatch() { log::set_sink(nullptr, nullptr); }

size_t LogWatch::warnings() const
{
    std::lock_guard<std::mutex> lock(log_mutex);
    return log_warnings;
}

std::string LogWatch::text() const
{
    std::lock_guard<std::mutex> lock(log_mutex);
    return log_lines;
}

std::unique_ptr<Transport> make_transport(const std::map<std::string, std::string> &settings, std::string *why)
{
    Config config;
    for (auto &kv : settings) config.set(kv.first, kv.second, "test");
    PluginLoadReport report;
    auto library = PluginLibrary::open("rdma", config, &report);
    if (!library) {
        *why = "loading the plugin: " + report.reason;
        return nullptr;
    }
    return Transport::from_plugin(std::move(library), config, why);
}

tw_transport_stats transport_stats(conformance::Env &env)
{
    tw_transport_stats s{};
    s.size = sizeof s;
    if (env.ops().ctrl(env.transport().handle(), nullptr, nullptr, TW_CTRL_GET_TRANSPORT_STATS, &s, sizeof s) != 0)
        throw std::runtime_error("TW_CTRL_GET_TRANSPORT_STATS failed");
    return s;
}

std::string transport_description(conformance::Env &env)
{
    char buf[8192] = "";
    env.ops().describe(env.transport().handle(), buf, sizeof buf);
    return buf;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

void close_finished(conformance::Env &env, conformance::Server &server, unsigned loop)
{
    env.on_loop(loop, [&] {
        for (conformance::Endpoint *e : server.endpoints)
            if (!e->closed && (e->failed() || (e->eof && !e->queued()))) e->close();
    });
}

/// fork + exec `program` with `args`; its stdout (and stderr when
/// `with_stderr`) go to the returned pipe.
static pid_t spawn(const std::string &program, const std::vector<std::string> &args, bool with_stderr, int *out_fd)
{
    std::vector<std::string> storage{program};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &s : storage) argv.push_back(const_cast<char *>(s.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        if (with_stderr) dup2(fds[1], 2);
        close(fds[0]);
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    close(fds[1]);
    *out_fd = fds[0];
    return pid;
}

/// This executable again, in a child mode (main.cpp dispatches `--child`).
static std::vector<std::string> child_args(const std::vector<std::string> &args)
{
    std::vector<std::string> all{"--child"};
    all.insert(all.end(), args.begin(), args.end());
    return all;
}

int run_program(const std::string &program, const std::vector<std::string> &args, std::string *output)
{
    int fd = -1;
    pid_t pid = spawn(program, args, true, &fd);
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

int run_child(const std::vector<std::string> &args, std::string *output)
{
    return run_program("/proc/self/exe", child_args(args), output);
}

pid_t start_child(const std::vector<std::string> &args, std::string *first_line)
{
    int fd = -1;
    pid_t pid = spawn("/proc/self/exe", child_args(args), false, &fd);
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') first_line->push_back(c);
    close(fd);
    return pid;
}

/// The numbers after `key` on every line `cmd` prints, summed; -1 when no
/// line has it (the command failed or printed nothing of the kind).
static long long sum_of_field(const char *cmd, const char *key)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    long long total = 0;
    bool any = false;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        const char *q = strstr(line, key);
        if (q) {
            total += strtoll(q + strlen(key), nullptr, 10);
            any = true;
        }
    }
    pclose(p);
    return any ? total : -1;
}

long qp_count() { return static_cast<long>(sum_of_field("rdma resource show 2>/dev/null", " qp ")); }

long long registered_by_this_process()
{
    char cmd[96];
    std::snprintf(cmd, sizeof cmd, "rdma resource show mr pid %d 2>/dev/null", int(getpid()));
    return sum_of_field(cmd, " mrlen ");
}

long kernel_log_count(const std::string &needle)
{
    int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, nullptr, 0);
    if (size <= 0) return -1;
    std::string buf(static_cast<size_t>(size), '\0');
    int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, &buf[0], size);
    if (n < 0) return -1;
    buf.resize(static_cast<size_t>(n));
    long count = 0;
    for (size_t at = buf.find(needle); at != std::string::npos; at = buf.find(needle, at + needle.size())) ++count;
    return count;
}

} // namespace twinwire::rdmatest
