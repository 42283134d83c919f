/* SPDX-License-Identifier: MIT */
/* examples/provider/file_provider.h -- the file provider, for a program that registers it itself. */
#ifndef FILE_PROVIDER_H
#define FILE_PROVIDER_H

#include <hpshm/provider.h>

#if defined(_WIN32)
#define FILE_PROVIDER_EXPORT __declspec(dllexport)
#else
#define FILE_PROVIDER_EXPORT __attribute__((visibility("default")))
#endif

/* Register it with hpshm_provider_register(&file_provider, NULL, NULL, &err). */
extern const struct hpshm_provider file_provider;

/* The module entry point (HPSHM_PROVIDER_MODULE_ENTRY) the hpshm tool calls. */
FILE_PROVIDER_EXPORT int hpshm_provider_module(hpshm_error *err);

#endif /* FILE_PROVIDER_H */
