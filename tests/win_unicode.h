/* SPDX-License-Identifier: MIT */
/*
 * tests/win_unicode.h -- what tests/test_windows_unicode.c and its child program
 * tests/win_unicode_child.c agree on: the text outside ASCII, the words written in the
 * segment, the exit codes.
 */
#ifndef HPSHM_TESTS_WIN_UNICODE_H
#define HPSHM_TESTS_WIN_UNICODE_H

/* The acceptance value of issue 22, FOO=<U+6570 U+636E U+00E9>: two letters no Western code
 * page has, and one every Western code page has (a conversion that takes the code page for
 * UTF-8 garbles it). */
#define UNI_VAR          "FOO"
#define UNI_VALUE_UTF8   "\xe6\x95\xb0\xe6\x8d\xae\xc3\xa9"
#define UNI_VALUE_WIDE   L"\u6570\u636e\u00e9"
/* The same letters in a segment's name and a directory's. */
#define UNI_LETTERS_UTF8 "\xe6\x95\xb0\xe6\x8d\xae"
#define UNI_LETTER_WIDE  L"\u6570"

#define UNI_OK       0 /* the check held */
#define UNI_USAGE    2 /* unknown mode or bad arguments */
#define UNI_MISMATCH 3 /* the check failed */

#define UNI_MAGIC 0x5A5A1234u /* the word the parent writes at offset 0 */
#define UNI_REPLY 0xC0FFEE42u /* the word the child writes back at offset 8 */

#endif /* HPSHM_TESTS_WIN_UNICODE_H */
