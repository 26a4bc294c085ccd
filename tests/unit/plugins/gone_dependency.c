/* SPDX-License-Identifier: MIT */
/* Linked by the VARIANT_NEEDS_GONE test plugin under a soname no file has,
 * so dlopen of that plugin fails the way a missing libibverbs.so.1 would. */
int tw_test_gone_function(void);
int tw_test_gone_function(void) { return 42; }
