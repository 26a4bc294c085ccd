/* SPDX-License-Identifier: MIT */
/*
 * What a host built against the frozen ABI 1.2 headers does with a plugin
 * file: dlopen it (RTLD_NOW), call its entry point with (1, 2), and check
 * the info and the vtable the way a 1.2 loader does - the 1.0 table is there
 * and every required member set - reading no member past its own 1.2 table.
 * Prints one line per file and exits non-zero if any is refused.
 *   abi-1-2-host PLUGIN.so...
 */
#include <twinwire/plugin.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

_Static_assert(TW_ABI_MINOR == 2, "built against the frozen ABI 1.2 headers");

static int check(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("REFUSED %s: dlopen: %s\n", path, dlerror());
        return 1;
    }
    tw_plugin_entry_fn entry = (tw_plugin_entry_fn)dlsym(h, TW_PLUGIN_ENTRY_SYMBOL);
    const struct tw_plugin_info *info = entry ? entry(TW_ABI_MAJOR, TW_ABI_MINOR) : NULL;
    const char *why = !entry                                                     ? "no entry point"
                      : !info                                                    ? "the entry point refused ABI 1.2"
                      : info->size < TW_PLUGIN_INFO_SIZE_V1                      ? "plugin info smaller than 1.0's"
                      : info->abi_major != TW_ABI_MAJOR                          ? "another ABI major"
                      : !info->ops || info->ops->size < TW_TRANSPORT_OPS_SIZE_V1 ? "vtable smaller than 1.0's"
                                                                                 : NULL;
    if (!why) {
        /* The table as this host knows it: its first sizeof bytes at most. */
        struct tw_transport_ops ops;
        memset(&ops, 0, sizeof ops);
        memcpy(&ops, info->ops, info->ops->size < sizeof ops ? info->ops->size : sizeof ops);
        if (!ops.init || !ops.fini || !ops.loop_attach || !ops.listen || !ops.accept || !ops.connect || !ops.read ||
            !ops.write || !ops.close || !ops.get_error || !ops.last_error)
            why = "a required operation is missing";
        else
            printf("LOADED %s: %s (plugin ABI 1.%u, vtable %u bytes, this host reads %zu)\n", path, ops.name,
                   info->abi_minor, info->ops->size, sizeof ops);
    }
    if (why) printf("REFUSED %s: %s\n", path, why);
    dlclose(h);
    return why != NULL;
}

int main(int argc, char **argv)
{
    int failed = 0;
    for (int i = 1; i < argc; i++) failed += check(argv[i]);
    return failed ? 1 : 0;
}
