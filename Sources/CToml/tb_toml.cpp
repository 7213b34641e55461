// The C interface of include/tb_toml.h over toml++ (linked as Debian's shared libtomlplusplus).
#include "tb_toml.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

struct tb_toml_document {
    toml::table table;
    std::vector<tb_toml_item> items;
};

namespace {

tb_toml_item item_of(const toml::node &node, const toml::key *key, uint32_t depth) {
    tb_toml_item item{};
    item.depth = depth;
    if (key != nullptr) {
        item.key = key->str().data();
        item.key_length = key->str().size();
        item.line = key->source().begin.line;
    } else {
        item.line = node.source().begin.line;
    }
    switch (node.type()) {
    case toml::node_type::string: {
        const std::string &s = node.as_string()->get();
        item.kind = TB_TOML_STRING;
        item.string = s.data();
        item.string_length = s.size();
        break;
    }
    case toml::node_type::integer:
        item.kind = TB_TOML_INTEGER;
        item.integer = node.as_integer()->get();
        break;
    case toml::node_type::floating_point:
        item.kind = TB_TOML_FLOAT;
        item.floating = node.as_floating_point()->get();
        break;
    case toml::node_type::boolean:
        item.kind = TB_TOML_BOOLEAN;
        item.boolean = node.as_boolean()->get();
        break;
    case toml::node_type::array:
        item.kind = TB_TOML_ARRAY;
        break;
    case toml::node_type::table:
        item.kind = TB_TOML_TABLE;
        break;
    default:
        item.kind = TB_TOML_DATE_TIME;
        break;
    }
    return item;
}

void add(std::vector<tb_toml_item> &items, const toml::node &node, const toml::key *key, uint32_t depth) {
    items.push_back(item_of(node, key, depth));
    if (const toml::table *table = node.as_table()) {
        for (auto &&[inner_key, inner] : *table) add(items, inner, &inner_key, depth + 1);
    } else if (const toml::array *array = node.as_array()) {
        for (const toml::node &element : *array) add(items, element, nullptr, depth + 1);
    }
}

} // namespace

extern "C" tb_toml_document *tb_toml_parse(const char *text, size_t length, uint32_t *error_line, char *error,
                                           size_t error_capacity) {
    auto *document = new tb_toml_document();
    try {
        document->table = toml::parse(std::string_view(text, length));
    } catch (const toml::parse_error &e) {
        std::string_view why = e.description();
        *error_line = e.source().begin.line;
        if (error_capacity > 0) std::snprintf(error, error_capacity, "%.*s", int(why.size()), why.data());
        delete document;
        return nullptr;
    }
    for (auto &&[key, node] : document->table) add(document->items, node, &key, 0);
    return document;
}

extern "C" size_t tb_toml_count(const tb_toml_document *document) { return document->items.size(); }

extern "C" tb_toml_item tb_toml_item_at(const tb_toml_document *document, size_t index) {
    return document->items[index];
}

extern "C" void tb_toml_free(tb_toml_document *document) { delete document; }
