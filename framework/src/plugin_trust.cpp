// SPDX-License-Identifier: MIT
// Plugin files are code: only files that no other user could have written
// or replaced are loaded.
#include "plugin_trust.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace twinwire {
namespace {

std::string mode_text(mode_t mode)
{
    char m[8];
    std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(mode & 07777));
    return m;
}

std::string untrusted(const std::string &path, const struct stat &st, bool directory)
{
    const uid_t me = geteuid();
    if (st.st_uid != 0 && st.st_uid != me)
        return path + " is owned by uid " + std::to_string(st.st_uid) + ", neither root nor the effective user (uid " +
               std::to_string(me) + ")";
    const bool sticky_root_dir = directory && st.st_uid == 0 && (st.st_mode & S_ISVTX);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_root_dir)
        return path + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " +
               mode_text(st.st_mode) + ")";
    return {};
}

} // namespace

std::string plugin_file_untrusted(const std::string &path, std::string *resolved)
{
    char real[PATH_MAX];
    if (!realpath(path.c_str(), real)) return std::string("cannot resolve it: ") + std::strerror(errno);
    std::string file = real;
    struct stat st;
    if (stat(file.c_str(), &st) != 0) return "cannot stat " + file + ": " + std::strerror(errno);
    if (!S_ISREG(st.st_mode)) return file + " is not a regular file";
    std::string why = untrusted(file, st, false);
    for (std::string dir = file; why.empty() && dir != "/";) {
        size_t slash = dir.rfind('/');
        dir = slash == 0 ? "/" : dir.substr(0, slash);
        if (stat(dir.c_str(), &st) != 0) return "cannot stat " + dir + ": " + std::strerror(errno);
        why = untrusted(dir, st, true);
    }
    if (!why.empty())
        return "refused: " + why + " (plugins load only from files and directories that no other user can write)";
    *resolved = file;
    return {};
}

} // namespace twinwire
