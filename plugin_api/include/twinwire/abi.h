/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/abi.h
 * ABI version, symbol visibility and layout checks shared by every twinwire
 * ABI header.
 *
 * Two version numbers, distinct: the plugin ABI's, TW_ABI_MAJOR.TW_ABI_MINOR
 * below, and the project's release (meson.build's project(), which
 * `twinwire-info --version` and the pkg-config files show).  twinwire 1.0.0
 * shipped plugin ABI 1.3; 1.1.0 ships 1.4.  Whatever was added after ABI 1.0 says
 * "since ABI 1.N" in its doc comment (a type added whole says it once, for
 * all its members or values).
 *
 * Compatibility rules (read these before changing any twinwire header):
 *  - TW_ABI_MAJOR changes only when an existing struct member moves, changes
 *    type or meaning, or is removed.  The major version is part of the plugin
 *    entry symbol (twinwire_plugin_entry_v<MAJOR>) and of the plugin file name
 *    (twinwire-<name>-abi<MAJOR>.so), so a plugin of another major version
 *    fails to load with a clear reason instead of crashing.  This header is
 *    the one place the major is written: the entry symbol, the plugins'
 *    version scripts and their file names are all derived from it.
 *  - TW_ABI_MINOR grows when a member is appended to the end of a struct, or
 *    when a new flag bit, enum value or error code is given to an existing
 *    member.  Nothing is ever inserted in the middle.
 *  - Every struct that crosses the boundary starts with `uint32_t size`, the
 *    number of bytes of the struct its producer knows (sizeof in the
 *    producer's build; for a struct the caller passes to be filled, the
 *    caller's sizeof).  `size` is the one authority for which members exist:
 *    a member is present when the whole member fits in `size`, that is
 *    `size >= offsetof(type, member) + sizeof(member)` (TW_HAS_MEMBER).  A
 *    consumer treats an absent member as zero / NULL / "not offered", never
 *    reads or writes past `size`, and ignores bytes past its own sizeof.
 *  - tw_host, tw_transport_ops, tw_plugin_info, tw_listen_params,
 *    tw_connect_params and tw_buf each have a minimum, TW_<NAME>_SIZE_V1: the
 *    size of their ABI 1.0 layout.  Everything inside that minimum is always present; a table
 *    smaller than it is refused with the reason (-TW_EABI or -EINVAL).  A
 *    consumer accepts any size at or above the minimum, smaller or larger
 *    than its own sizeof, and reads members past the minimum only behind
 *    TW_HAS_MEMBER.
 *  - Structs a caller passes to be filled (tw_conn_stats,
 *    tw_transport_stats) have no minimum: the callee fills what fits in the
 *    caller's `size` (at least the 8-byte size/version header).
 *  - `version` (second member of tw_host, tw_transport_ops, tw_plugin_info
 *    and the stats) is the producer's TW_ABI_MINOR.  It never says which
 *    members exist (size does).  It says which *values* the producer
 *    understands: a flag bit, enum value, error code or ctrl op introduced
 *    in ABI 1.N is passed to a party (in any argument or struct, the params
 *    and tw_buf included) only when that party's table has version >= N.
 *    Nobody refuses a table for its version.
 */
#ifndef TWINWIRE_ABI_H
#define TWINWIRE_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Defined elsewhere only by twinwire's own build to test the next major
 * (-DTW_ABI_MAJOR=2); everyone else gets the real one. */
#ifndef TW_ABI_MAJOR
#define TW_ABI_MAJOR 1
#endif
/* 1.1: tw_host.vlog appended.  1.2: tw_host.transport_ops appended.
 * 1.3: one-sided remote memory: TW_CAP_RMA, tw_transport_ops.rma_*,
 * struct tw_rma_request, TW_EREMOTEACCESS.
 * 1.4: the shared ctrl op TW_CTRL_RELOAD_CREDENTIALS. */
#define TW_ABI_MINOR 4

#define TW_STRINGIFY_(x) #x
#define TW_STRINGIFY(x)  TW_STRINGIFY_(x)

#define TW_PASTE_(a, b) a##b
#define TW_PASTE(a, b)  TW_PASTE_(a, b)

/** Name of the one symbol a plugin exports: twinwire_plugin_entry_v1. */
#define TW_PLUGIN_ENTRY_SYMBOL_FOR(major) "twinwire_plugin_entry_v" TW_STRINGIFY(major)
#define TW_PLUGIN_ENTRY_SYMBOL            TW_PLUGIN_ENTRY_SYMBOL_FOR(TW_ABI_MAJOR)
/** The C identifier of the entry point, for the plugin's own definition:
 *  twinwire_plugin_entry_v<TW_ABI_MAJOR>, pasted from the major above. */
#define TW_PLUGIN_ENTRY TW_PASTE(twinwire_plugin_entry_v, TW_ABI_MAJOR)

/** File name of a transport plugin: twinwire-rdma-abi1.so for name "rdma". */
#define TW_PLUGIN_FILE_NAME(name) "twinwire-" name "-abi" TW_STRINGIFY(TW_ABI_MAJOR) ".so"

/** Marks the entry point as the plugin's only exported symbol. */
#if defined(__GNUC__) || defined(__clang__)
#define TW_EXPORT            __attribute__((visibility("default")))
#define TW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TW_EXPORT
#define TW_PRINTF(fmt, args)
#endif

#ifdef __cplusplus
#define TW_BEGIN_DECLS extern "C" {
#define TW_END_DECLS   }
#else
#define TW_BEGIN_DECLS
#define TW_END_DECLS
#endif

/** The number of bytes of `type` up to and including `member`. */
#define TW_SIZE_THROUGH(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
/** True when a struct whose `size` field says how many bytes it has holds
 *  the whole of `member` (see the rules above). */
#define TW_HAS_MEMBER(table_ptr, type, member) ((size_t)(table_ptr)->size >= TW_SIZE_THROUGH(type, member))

/* Layout checks that work in C99 (no _Static_assert there), C11 and C++. */
#if defined(__cplusplus)
#define TW_ABI_ASSERT(cond, tag) static_assert(cond, #tag)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define TW_ABI_ASSERT(cond, tag) _Static_assert(cond, #tag)
#else
#define TW_ABI_ASSERT(cond, tag) typedef char tw_abi_assert_##tag[(cond) ? 1 : -1]
#endif

/* The pinned layouts below are those of the LP64 Linux ABI (x86_64, aarch64). */
#if defined(__LP64__) && defined(__linux__)
#define TW_ABI_LP64 1
#else
#define TW_ABI_LP64 0
#endif

#endif /* TWINWIRE_ABI_H */
