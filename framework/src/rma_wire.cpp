// SPDX-License-Identifier: MIT
#include "rma_wire.hpp"

#include <twinwire/transport.h>

#include <endian.h>

#include <cstring>

namespace twinwire::rma {

void put_header(char out[kHeaderSize], const Header &h)
{
    uint32_t len = htole32(h.len);
    uint64_t tag = htole64(h.tag);
    std::memcpy(out, &len, 4);
    out[4] = static_cast<char>(h.type);
    out[5] = static_cast<char>(h.flags);
    out[6] = out[7] = 0;
    std::memcpy(out + 8, &tag, 8);
}

Header get_header(const char in[kHeaderSize])
{
    Header h;
    h.len = get_u32(in);
    h.type = static_cast<Frame>(static_cast<uint8_t>(in[4]));
    h.flags = static_cast<uint8_t>(in[5]);
    h.tag = get_u64(in + 8);
    return h;
}

void put_u32(std::string &out, uint32_t v)
{
    v = htole32(v);
    out.append(reinterpret_cast<const char *>(&v), 4);
}

void put_u64(std::string &out, uint64_t v)
{
    v = htole64(v);
    out.append(reinterpret_cast<const char *>(&v), 8);
}

uint32_t get_u32(const char *in)
{
    uint32_t v;
    std::memcpy(&v, in, 4);
    return le32toh(v);
}

uint64_t get_u64(const char *in)
{
    uint64_t v;
    std::memcpy(&v, in, 8);
    return le64toh(v);
}

std::string encode(const Descriptor &d)
{
    std::string out;
    put_u32(out, kMagic);
    put_u64(out, d.id);
    put_u64(out, d.key);
    put_u64(out, d.len);
    put_u32(out, d.access);
    put_u32(out, kVersion);
    return out;
}

bool decode(std::string_view bytes, Descriptor *out, std::string *why)
{
    if (bytes.size() != kDescriptorSize || get_u32(bytes.data()) != kMagic) {
        *why = "not a descriptor of twinwire's RMA emulation (" + std::to_string(bytes.size()) + " bytes)";
        return false;
    }
    if (get_u32(bytes.data() + 32) != kVersion) {
        *why = "an RMA descriptor of another version (" + std::to_string(get_u32(bytes.data() + 32)) + ")";
        return false;
    }
    out->id = get_u64(bytes.data() + 4);
    out->key = get_u64(bytes.data() + 12);
    out->len = get_u64(bytes.data() + 20);
    out->access = get_u32(bytes.data() + 28);
    if ((out->access & ~uint32_t(TW_RMA_READ | TW_RMA_WRITE)) || !out->access || !out->len) {
        *why = "a malformed RMA descriptor (access or length)";
        return false;
    }
    return true;
}

} // namespace twinwire::rma
