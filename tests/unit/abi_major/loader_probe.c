/* SPDX-License-Identifier: MIT */
/* Look a plugin up as the loader does, by names derived from TW_ABI_MAJOR:
 * usage: loader-probe DIR.  Prints what it found; exits 1 on a mismatch. */
#include <twinwire/plugin.h>

#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char path[4096];
    if (argc != 2) return 2;
    snprintf(path, sizeof path, "%s/%s", argv[1], TW_PLUGIN_FILE_NAME("probe"));
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        printf("FAIL: %s\n", dlerror());
        return 1;
    }
    tw_plugin_entry_fn entry = (tw_plugin_entry_fn)(uintptr_t)dlsym(dl, TW_PLUGIN_ENTRY_SYMBOL);
    const struct tw_plugin_info *info = entry ? entry(TW_ABI_MAJOR, TW_ABI_MINOR) : NULL;
    if (!info || info->abi_major != TW_ABI_MAJOR) {
        printf("FAIL: %s in %s: %s\n", TW_PLUGIN_ENTRY_SYMBOL, path, entry ? "wrong major" : "not exported");
        return 1;
    }
    printf("ok: %s exports %s, abi_major %u\n", path, TW_PLUGIN_ENTRY_SYMBOL, info->abi_major);
    return 0;
}
