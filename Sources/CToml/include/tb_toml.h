// The config file's TOML, read by toml++ (Debian's libtomlplusplus3) behind a C interface: the parsed
// document as a flat list of items in pre-order, each with its key and its line, so that Swift needs no
// C++ and the strings come whole (with their length: a NUL inside a string is kept, not cut).
#ifndef TB_TOML_H
#define TB_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one item of the document is.
typedef enum tb_toml_kind {
    TB_TOML_STRING = 0,
    TB_TOML_INTEGER = 1,
    TB_TOML_FLOAT = 2,
    TB_TOML_BOOLEAN = 3,
    /// Followed by its elements, one level deeper.
    TB_TOML_ARRAY = 4,
    /// Followed by its entries, one level deeper.
    TB_TOML_TABLE = 5,
    /// A date, a time or a date-time.
    TB_TOML_DATE_TIME = 6,
} tb_toml_kind;

/// One key (of a table) or element (of an array) of the document. The pointers point into the document
/// and live as long as it does.
typedef struct tb_toml_item {
    /// 0 for a key of the root table, 1 inside a table or array of depth 0, and so on.
    uint32_t depth;
    tb_toml_kind kind;
    /// The key, for a table's entry; NULL (length 0) for an array's element.
    const char *key;
    size_t key_length;
    /// The line (1-based) of the key, or of the element for an array's element; 0 if unknown.
    uint32_t line;
    /// TB_TOML_STRING's value (UTF-8, `string_length` bytes; may hold NUL).
    const char *string;
    size_t string_length;
    /// TB_TOML_INTEGER's value.
    int64_t integer;
    /// TB_TOML_FLOAT's value.
    double floating;
    /// TB_TOML_BOOLEAN's value.
    bool boolean;
} tb_toml_item;

typedef struct tb_toml_document tb_toml_document;

/// Parses the `length` bytes at `text` as a TOML document. On failure returns NULL, sets `*error_line`
/// (1-based) and writes toml++'s description of the error into `error` (at most `error_capacity` bytes,
/// NUL-terminated).
tb_toml_document *tb_toml_parse(const char *text, size_t length, uint32_t *error_line, char *error,
                                size_t error_capacity);

/// The number of items of `document`.
size_t tb_toml_count(const tb_toml_document *document);

/// Item `index` (< tb_toml_count) of `document`, in document order (pre-order: a table or array, then
/// what it holds).
tb_toml_item tb_toml_item_at(const tb_toml_document *document, size_t index);

/// Frees `document` and everything its items point to.
void tb_toml_free(tb_toml_document *document);

#ifdef __cplusplus
}
#endif

#endif
