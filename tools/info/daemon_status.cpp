// SPDX-License-Identifier: MIT
#include "daemon_status.hpp"

#include "json_text.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

namespace {

struct TransportLine {
    std::string name, connections;
    std::vector<std::string> listening;
};

struct Status {
    std::string pid, program, connections;
    std::vector<TransportLine> transports;
};

// The whole answer; the program sends it and closes at once.
bool read_answer(const std::string &path, std::string *text, std::string *why)
{
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    if (path.size() >= sizeof un.sun_path) return *why = "longer than a Unix socket path can be", false;
    std::memcpy(un.sun_path, path.c_str(), path.size() + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr *>(&un), sizeof un) != 0) {
        *why = strerror(errno);
        if (fd >= 0) close(fd);
        return false;
    }
    char buf[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) {
            close(fd);
            return *why = "no answer within 5 s", false;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        text->append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return true;
}

std::vector<std::string> split(const std::string &text, char sep)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep))
        if (!part.empty()) parts.push_back(part);
    return parts;
}

bool parse(const std::string &text, Status *s)
{
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != "twinwire-status 1") return false;
    while (std::getline(in, line)) {
        std::string word = line.substr(0, line.find(' '));
        std::string rest = line.size() > word.size() ? line.substr(word.size() + 1) : "";
        if (word == "pid") s->pid = rest;
        else if (word == "program") s->program = rest;
        else if (word == "connections") s->connections = rest;
        else if (word == "transport") {
            std::vector<std::string> fields = split(rest, ' ');
            if (fields.empty()) continue;
            TransportLine t{fields[0], "0", {}};
            for (size_t i = 1; i < fields.size(); ++i) {
                const std::string &f = fields[i];
                if (f.rfind("connections=", 0) == 0) t.connections = f.substr(12);
                else if (f.rfind("listening=", 0) == 0) t.listening = split(f.substr(10), ',');
            }
            s->transports.push_back(t);
        }
    }
    return true;
}

void print_json(const std::string &path, const Status &s)
{
    std::printf("{\n  \"status_socket\": %s,\n  \"program\": %s,\n  \"pid\": %s,\n  \"connections\": %s,\n"
                "  \"transports\": [",
                json_string(path).c_str(), json_string(s.program).c_str(), s.pid.c_str(), s.connections.c_str());
    for (size_t i = 0; i < s.transports.size(); ++i) {
        const TransportLine &t = s.transports[i];
        std::printf("%s\n    {\"name\": %s, \"connections\": %s, \"listening\": %s}", i ? "," : "",
                    json_string(t.name).c_str(), t.connections.c_str(), json_list(t.listening).c_str());
    }
    std::printf("\n  ]\n}\n");
}

void print_text(const std::string &path, const Status &s)
{
    std::printf("%s (pid %s) on %s: %s connection%s\n", s.program.c_str(), s.pid.c_str(), path.c_str(),
                s.connections.c_str(), s.connections == "1" ? "" : "s");
    for (const TransportLine &t : s.transports) {
        std::string where;
        for (const std::string &l : t.listening) where += (where.empty() ? "" : ", ") + l;
        std::printf("  %-8s %s connection%s, %s\n", t.name.c_str(), t.connections.c_str(),
                    t.connections == "1" ? "" : "s",
                    where.empty() ? "not listening" : ("listening on " + where).c_str());
    }
}

} // namespace

bool print_daemon_status(const std::string &path, bool json)
{
    std::string text, why;
    if (!read_answer(path, &text, &why)) {
        std::fprintf(stderr,
                     "twinwire-info: nothing answers on %s: %s (is the program running with status_socket = %s?)\n",
                     path.c_str(), why.c_str(), path.c_str());
        return false;
    }
    Status s;
    if (!parse(text, &s)) {
        std::fprintf(stderr, "twinwire-info: %s answered, but not with a twinwire status (\"twinwire-status 1\")\n",
                     path.c_str());
        return false;
    }
    json ? print_json(path, s) : print_text(path, s);
    return true;
}
