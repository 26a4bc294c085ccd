/* SPDX-License-Identifier: MIT */
/**
 * @file twinwire/abi.h
 * ABI version, symbol visibility and layout checks shared by every twinwire
 * ABI header.
 *
 * Compatibility rules (read these before changing any twinwire header):
 *  - TW_ABI_MAJOR changes only when an existing struct member moves, changes
 *    type or meaning, or is removed.  The major version is part of the plugin
 *    entry symbol (twinwire_plugin_entry_v<MAJOR>) and of the plugin file name
 *    (twinwire-<name>-abi<MAJOR>.so), so a plugin of another major version
 *    fails to load with a clear reason instead of crashing.
 *  - TW_ABI_MINOR grows when a member is appended to the end of a table.
 *    Every table starts with `size` (bytes the producer knows) and `version`
 *    (the producer's TW_*_VERSION).  A consumer reads a member only when
 *    `size > offsetof(table, member)` (see TW_HAS_MEMBER); otherwise it
 *    treats the member as absent.  Nothing is ever inserted in the middle.
 */
#ifndef TWINWIRE_ABI_H
#define TWINWIRE_ABI_H

#include <stddef.h>
#include <stdint.h>

#define TW_ABI_MAJOR 1
#define TW_ABI_MINOR 0

#define TW_STRINGIFY_(x) #x
#define TW_STRINGIFY(x) TW_STRINGIFY_(x)

/** Name of the one symbol a plugin exports: twinwire_plugin_entry_v1. */
#define TW_PLUGIN_ENTRY_SYMBOL_FOR(major) "twinwire_plugin_entry_v" TW_STRINGIFY(major)
#define TW_PLUGIN_ENTRY_SYMBOL TW_PLUGIN_ENTRY_SYMBOL_FOR(TW_ABI_MAJOR)
/** The C identifier of the entry point, for the plugin's own definition. */
#define TW_PLUGIN_ENTRY twinwire_plugin_entry_v1

/** File name of a transport plugin: twinwire-rdma-abi1.so for name "rdma". */
#define TW_PLUGIN_FILE_NAME(name) "twinwire-" name "-abi" TW_STRINGIFY(TW_ABI_MAJOR) ".so"

/** Marks the entry point as the plugin's only exported symbol. */
#if defined(__GNUC__) || defined(__clang__)
#define TW_EXPORT __attribute__((visibility("default")))
#define TW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TW_EXPORT
#define TW_PRINTF(fmt, args)
#endif

#ifdef __cplusplus
#define TW_BEGIN_DECLS extern "C" {
#define TW_END_DECLS }
#else
#define TW_BEGIN_DECLS
#define TW_END_DECLS
#endif

/** True when a table of `size` bytes (its own `size` field) holds `member`. */
#define TW_HAS_MEMBER(table_ptr, type, member) \
    ((table_ptr)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

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
