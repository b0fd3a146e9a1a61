/* sm5-d3d11-runner: runs cs_5_0 DXBC programs through the Direct3D 11 API and prints what they
 * did, one JSON line per program.
 *
 *   sm5-d3d11-runner.exe [--warp] [--start N] [FILE]      (no FILE: standard input)
 *
 * Input: the stream `sm5 d3d11 stream` writes (all integers little-endian u32):
 *
 *   header  "SM5D3D11" version(=3)
 *   record  "REC1" id_len id[id_len] digest_len digest[digest_len] dxbc_len dxbc[dxbc_len]
 *           view_count, then per view: file slot kind format stride first_element
 *           num_elements has_counter counter word_count words[word_count]
 *
 *   file: 0 an unordered access view (u#), 1 a shader resource view (t#), 2 a constant
 *   buffer (cb#, slot below D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT).
 *   kind: 0 NULL view (for a cb#: no buffer in its slot), 1 raw, 2 structured, 3 typed
 *   (format: a DXGI_FORMAT number), 4 constant (the kind of every cb# with words, and of
 *   nothing else).
 *   Each UAV or SRV is a window [first_element, first_element + num_elements) of a buffer
 *   holding word_count words (the caller fills the rest with canary words). A constant buffer
 *   has no view: its words are its contents, 4 per 16-byte element (num_elements of them, at
 *   most D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT), format, stride, first_element, has_counter
 *   and counter are 0. It is created with D3D11_BIND_CONSTANT_BUFFER, ByteWidth the words'
 *   bytes rounded up to a multiple of 16 (the rest 0s), bound whole with CSSetConstantBuffers,
 *   and never read back.
 *   has_counter: 1 for a structured UAV whose view has a hidden counter
 *   (D3D11_BUFFER_UAV_FLAG_COUNTER); counter is its initial count (pUAVInitialCounts).
 *
 * Output: a header line {"format": "sm5-d3d11-results/1", ...device...}, then per record one of
 *   {"id", "digest", "status": "state", "invocations": N|null, "views": [[words], ...],
 *    "counters": [N|null, ...]}
 *     (invocations: the pipeline statistics' CSInvocations, null when the query is unavailable;
 *     0 means the dispatch did not run; views: one per UAV and SRV of the record, in record
 *     order, constant buffers left out; a NULL view reads back as []; counters: per view of
 *     views, the hidden counter's final count read with CopyStructureCount, null for a view
 *     without one)
 *   {"id", "digest", "status": "error", "reason": "..."}       an API call failed
 *   {"id", "digest", "status": "unsupported", "reason": "..."} the device lacks a feature
 * Each line is flushed before the next record is read, so a caller may feed records one at a
 * time. A malformed stream ends the run with a {"status": "malformed"} line and exit status 2.
 * An exception (a crash in the driver) prints {"status": "crash"} for the current record and
 * exits with status 3.
 */
#define COBJMACROS
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <d3d11.h>
#include <dxgi.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNNER_VERSION "3"
#define STREAM_VERSION 3u
#define MAX_ID 4096u
#define MAX_DXBC (16u << 20)
#define MAX_VIEWS 64u
#define MAX_WORDS (16u << 20)
#define QUERY_SPINS 2000000u
/* Compute shaders kept for reuse: vectors of one instruction and section often share their
 * harness program (about 8,300 distinct programs among 18,000 executed golden vectors), and
 * creating a shader is where Wine spends most of a record (its DXBC front end, then Mesa's
 * GLSL or SPIR-V compiler). A shader object is immutable, so reuse cannot change a result. */
#define SHADER_CACHE_SIZE 64u

enum view_kind {
    VIEW_NULL = 0, VIEW_RAW = 1, VIEW_STRUCTURED = 2, VIEW_TYPED = 3, VIEW_CONSTANT = 4
};
enum view_file { FILE_UAV = 0, FILE_SRV = 1, FILE_CB = 2 };
/* dcl_globalFlags: the opcode and the flag a program sets when it uses doubles. */
#define OPCODE_DCL_GLOBAL_FLAGS 0x6Au
#define GLOBAL_FLAG_DOUBLES (1u << 12)

struct view {
    uint32_t file, slot, kind, format, stride, first_element, num_elements;
    uint32_t has_counter, counter, word_count;
    uint32_t *words;
};

struct record {
    char id[MAX_ID + 1];
    char digest[MAX_ID + 1];
    uint8_t *dxbc;
    uint32_t dxbc_len;
    uint32_t view_count;
    struct view views[MAX_VIEWS];
};

struct cached_shader {
    uint8_t *dxbc;
    uint32_t dxbc_len;
    ID3D11ComputeShader *shader;
};

struct device {
    ID3D11Device *device;
    ID3D11DeviceContext *context;
    D3D_FEATURE_LEVEL level;
    int doubles;
    struct cached_shader shaders[SHADER_CACHE_SIZE]; /* replaced round-robin */
    uint32_t next_shader;
};

static FILE *input;
static uint64_t input_offset;
static volatile LONG in_record;
static char current_id[MAX_ID + 1];
static char current_digest[MAX_ID + 1];

/* ------------------------------------------------------------------------------ output */

static void put_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void begin_line(const char *status)
{
    printf("{\"id\":");
    put_json_string(current_id);
    printf(",\"digest\":");
    put_json_string(current_digest);
    printf(",\"status\":\"%s\"", status);
}

static void reason_line(const char *status, const char *reason)
{
    begin_line(status);
    printf(",\"reason\":");
    put_json_string(reason);
    printf("}\n");
    fflush(stdout);
}

static void call_failed(const char *call, HRESULT hr)
{
    char text[256];
    snprintf(text, sizeof text, "%s failed: HRESULT 0x%08lx", call, (unsigned long)hr);
    reason_line("error", text);
}

struct device;
static void release_device(struct device *d);
/* The device in use, released before a malformed stream ends the run: exiting with a device
 * alive lets Wine's OpenGL renderer tear its context down while its command thread still runs,
 * which can end the process on SIGSEGV instead of the status 2 promised above. */
static struct device *live_device;

static void malformed(const char *what)
{
    char text[256];
    snprintf(text, sizeof text, "malformed stream at byte %llu: %s",
             (unsigned long long)input_offset, what);
    printf("{\"status\":\"malformed\",\"reason\":");
    put_json_string(text);
    printf("}\n");
    fflush(stdout);
    if (live_device)
        release_device(live_device);
    exit(2);
}

static LONG WINAPI on_exception(EXCEPTION_POINTERS *info)
{
    char text[128];
    snprintf(text, sizeof text, "exception 0x%08lx in the runner or the driver",
             (unsigned long)info->ExceptionRecord->ExceptionCode);
    if (in_record)
        reason_line("crash", text);
    fflush(stdout);
    TerminateProcess(GetCurrentProcess(), 3);
    return EXCEPTION_EXECUTE_HANDLER;
}

/* ------------------------------------------------------------------------------ input */

/* 1: read all bytes; 0: clean end of input before the first byte; malformed otherwise. */
static int read_exact(void *buffer, size_t size, int eof_allowed)
{
    size_t got = fread(buffer, 1, size, input);
    input_offset += got;
    if (got == size)
        return 1;
    if (got == 0 && eof_allowed && feof(input))
        return 0;
    malformed("unexpected end of input");
    return 0;
}

static uint32_t read_u32(void)
{
    uint8_t b[4];
    read_exact(b, 4, 0);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void read_text(char *out, const char *what)
{
    uint32_t len = read_u32();
    if (len > MAX_ID)
        malformed(what);
    read_exact(out, len, 0);
    out[len] = 0;
}

static void free_record(struct record *r)
{
    uint32_t i;
    free(r->dxbc);
    r->dxbc = NULL;
    for (i = 0; i < r->view_count; i++) {
        free(r->views[i].words);
        r->views[i].words = NULL;
    }
    r->view_count = 0;
}

/* 1: a record was read; 0: end of input. */
static int read_record(struct record *r)
{
    uint8_t tag[4];
    uint32_t i;
    if (!read_exact(tag, 4, 1))
        return 0;
    if (memcmp(tag, "REC1", 4) != 0)
        malformed("expected a record tag REC1");
    read_text(r->id, "id longer than 4096 bytes");
    read_text(r->digest, "digest longer than 4096 bytes");
    r->dxbc_len = read_u32();
    if (r->dxbc_len > MAX_DXBC)
        malformed("DXBC larger than 16 MiB");
    r->dxbc = malloc(r->dxbc_len ? r->dxbc_len : 1);
    if (!r->dxbc)
        malformed("out of memory");
    read_exact(r->dxbc, r->dxbc_len, 0);
    r->view_count = read_u32();
    if (r->view_count > MAX_VIEWS)
        malformed("more than 64 views");
    for (i = 0; i < r->view_count; i++) {
        struct view *v = &r->views[i];
        v->words = NULL;
        v->file = read_u32();
        v->slot = read_u32();
        v->kind = read_u32();
        v->format = read_u32();
        v->stride = read_u32();
        v->first_element = read_u32();
        v->num_elements = read_u32();
        v->has_counter = read_u32();
        v->counter = read_u32();
        v->word_count = read_u32();
        if (v->file > FILE_CB || v->kind > VIEW_CONSTANT
            || v->slot >= (v->file == FILE_UAV ? D3D11_1_UAV_SLOT_COUNT
                           : v->file == FILE_SRV ? D3D11_COMMONSHADER_INPUT_RESOURCE_SLOT_COUNT
                           : D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT))
            malformed("view file, slot or kind out of range");
        if (v->file == FILE_CB ? v->kind != VIEW_CONSTANT && v->kind != VIEW_NULL
                               : v->kind == VIEW_CONSTANT)
            malformed("a constant buffer (file 2) is of kind 4 or 0, and kind 4 is a constant "
                      "buffer's only");
        if (v->word_count > MAX_WORDS)
            malformed("view larger than 16 Mi words");
        if (v->kind == VIEW_CONSTANT
            && (v->word_count == 0 || v->word_count > D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT * 4u))
            malformed("constant buffer of no words (a NULL one is kind 0) or of more than 4096 "
                      "elements");
        if (v->kind == VIEW_STRUCTURED && (v->stride == 0 || v->stride % 4 != 0))
            malformed("structured view with a stride that is not a positive multiple of 4");
        if (v->has_counter > 1
            || (v->has_counter && (v->file != FILE_UAV || v->kind != VIEW_STRUCTURED)))
            malformed("has_counter is not 0 or 1, or is set on a view that is not a "
                      "structured UAV");
        v->words = malloc(v->word_count ? (size_t)v->word_count * 4 : 4);
        if (!v->words)
            malformed("out of memory");
        read_exact(v->words, (size_t)v->word_count * 4, 0);
    }
    return 1;
}

/* Does the program set the doubles global flag (it then needs D3D11_FEATURE_DOUBLES)? */
static int uses_doubles(const uint8_t *dxbc, uint32_t len)
{
    uint32_t chunks, i;
    if (len < 32 || memcmp(dxbc, "DXBC", 4) != 0)
        return 0;
    memcpy(&chunks, dxbc + 28, 4);
    for (i = 0; i < chunks && 32 + 4 * (i + 1) <= len; i++) {
        uint32_t at, size, tokens, t;
        memcpy(&at, dxbc + 32 + 4 * i, 4);
        if (at > len - 8 || (memcmp(dxbc + at, "SHEX", 4) && memcmp(dxbc + at, "SHDR", 4)))
            continue;
        memcpy(&size, dxbc + at + 4, 4);
        if (size > len - at - 8)
            return 0;
        tokens = size / 4;
        for (t = 2; t < tokens;) {
            uint32_t token, length;
            memcpy(&token, dxbc + at + 8 + 4 * t, 4);
            if ((token & 0x7FFu) == OPCODE_DCL_GLOBAL_FLAGS)
                return (token & GLOBAL_FLAG_DOUBLES) != 0;
            length = (token >> 24) & 0x7Fu;
            if (length == 0)
                return 0; /* a customdata block: no more declarations to look at here */
            t += length;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------ device */

static HRESULT create_device(struct device *d, int warp)
{
    static const D3D_FEATURE_LEVEL levels[] = {D3D_FEATURE_LEVEL_11_1, D3D_FEATURE_LEVEL_11_0};
    D3D_DRIVER_TYPE type = warp ? D3D_DRIVER_TYPE_WARP : D3D_DRIVER_TYPE_HARDWARE;
    D3D11_FEATURE_DATA_DOUBLES doubles;
    HRESULT hr;
    memset(d, 0, sizeof *d);
    hr = D3D11CreateDevice(NULL, type, NULL, 0, levels, 2, D3D11_SDK_VERSION, &d->device,
                           &d->level, &d->context);
    if (hr == E_INVALIDARG) /* a runtime that does not know 11_1 */
        hr = D3D11CreateDevice(NULL, type, NULL, 0, levels + 1, 1, D3D11_SDK_VERSION,
                               &d->device, &d->level, &d->context);
    if (FAILED(hr))
        return hr;
    memset(&doubles, 0, sizeof doubles);
    if (SUCCEEDED(ID3D11Device_CheckFeatureSupport(d->device, D3D11_FEATURE_DOUBLES, &doubles,
                                                   sizeof doubles)))
        d->doubles = doubles.DoublePrecisionFloatShaderOps != 0;
    return S_OK;
}

static void release_device(struct device *d)
{
    uint32_t i;
    for (i = 0; i < SHADER_CACHE_SIZE; i++) {
        if (d->shaders[i].shader)
            ID3D11ComputeShader_Release(d->shaders[i].shader);
        free(d->shaders[i].dxbc);
    }
    if (d->context)
        ID3D11DeviceContext_Release(d->context);
    if (d->device)
        ID3D11Device_Release(d->device);
    memset(d, 0, sizeof *d);
}

static void print_header(const struct device *d, int warp)
{
    DXGI_ADAPTER_DESC desc;
    IDXGIDevice *dxgi = NULL;
    IDXGIAdapter *adapter = NULL;
    char name[512] = "unknown";
    memset(&desc, 0, sizeof desc);
    if (SUCCEEDED(ID3D11Device_QueryInterface(d->device, &IID_IDXGIDevice, (void **)&dxgi))) {
        if (SUCCEEDED(IDXGIDevice_GetAdapter(dxgi, &adapter))) {
            if (SUCCEEDED(IDXGIAdapter_GetDesc(adapter, &desc)))
                WideCharToMultiByte(CP_UTF8, 0, desc.Description, -1, name, sizeof name, NULL,
                                    NULL);
            IDXGIAdapter_Release(adapter);
        }
        IDXGIDevice_Release(dxgi);
    }
    printf("{\"format\":\"sm5-d3d11-results/1\",\"runner\":\"sm5-d3d11-runner " RUNNER_VERSION
           "\",\"driver\":\"%s\",\"feature_level\":\"%s\",\"adapter\":",
           warp ? "warp" : "hardware", d->level == D3D_FEATURE_LEVEL_11_1 ? "11_1" : "11_0");
    put_json_string(name);
    printf(",\"vendor_id\":%u,\"device_id\":%u,\"doubles\":%s}\n", desc.VendorId,
           desc.DeviceId, d->doubles ? "true" : "false");
    fflush(stdout);
}

/* ------------------------------------------------------------------------------ one program */

struct resources {
    ID3D11ComputeShader *shader;
    ID3D11Buffer *buffers[MAX_VIEWS];
    ID3D11UnorderedAccessView *uavs[MAX_VIEWS];
    ID3D11ShaderResourceView *srvs[MAX_VIEWS];
    ID3D11Buffer *staging[MAX_VIEWS];
    ID3D11Buffer *count_copy[MAX_VIEWS];    /* CopyStructureCount's destination */
    ID3D11Buffer *count_staging[MAX_VIEWS]; /* and its staging copy, mapped to read it */
    ID3D11Query *query;
};

static void release_resources(struct resources *res, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        if (res->staging[i])
            ID3D11Buffer_Release(res->staging[i]);
        if (res->count_copy[i])
            ID3D11Buffer_Release(res->count_copy[i]);
        if (res->count_staging[i])
            ID3D11Buffer_Release(res->count_staging[i]);
        if (res->uavs[i])
            ID3D11UnorderedAccessView_Release(res->uavs[i]);
        if (res->srvs[i])
            ID3D11ShaderResourceView_Release(res->srvs[i]);
        if (res->buffers[i])
            ID3D11Buffer_Release(res->buffers[i]);
    }
    if (res->query)
        ID3D11Query_Release(res->query);
    if (res->shader)
        ID3D11ComputeShader_Release(res->shader);
}

/* The view format of a buffer view: raw views read 32-bit words, structured ones have none,
 * typed ones the vector's format. */
static DXGI_FORMAT view_format(const struct view *v)
{
    return v->kind == VIEW_RAW ? DXGI_FORMAT_R32_TYPELESS
           : v->kind == VIEW_STRUCTURED ? DXGI_FORMAT_UNKNOWN
           : (DXGI_FORMAT)v->format;
}

/* A constant buffer: its words in a buffer of its own, ByteWidth rounded up to a multiple of 16
 * bytes (the words beyond them 0s). No view, no staging copy: it is never read back. */
static HRESULT create_constant(ID3D11Device *dev, const struct view *v, struct resources *res,
                               uint32_t i)
{
    D3D11_BUFFER_DESC bd;
    D3D11_SUBRESOURCE_DATA init;
    uint32_t bytes = (v->word_count * 4u + 15u) & ~15u;
    uint32_t *padded;
    HRESULT hr;
    padded = calloc(bytes / 4u, 4);
    if (!padded)
        return E_OUTOFMEMORY;
    memcpy(padded, v->words, (size_t)v->word_count * 4);
    memset(&bd, 0, sizeof bd);
    bd.ByteWidth = bytes;
    bd.Usage = D3D11_USAGE_IMMUTABLE;
    bd.BindFlags = D3D11_BIND_CONSTANT_BUFFER;
    init.pSysMem = padded;
    init.SysMemPitch = 0;
    init.SysMemSlicePitch = 0;
    hr = ID3D11Device_CreateBuffer(dev, &bd, &init, &res->buffers[i]);
    free(padded);
    return hr;
}

static HRESULT create_view(ID3D11Device *dev, const struct view *v, struct resources *res,
                           uint32_t i)
{
    D3D11_BUFFER_DESC bd;
    D3D11_SUBRESOURCE_DATA init;
    D3D11_UNORDERED_ACCESS_VIEW_DESC ud;
    D3D11_SHADER_RESOURCE_VIEW_DESC sd;
    HRESULT hr;
    memset(&bd, 0, sizeof bd);
    bd.ByteWidth = v->word_count * 4;
    bd.Usage = D3D11_USAGE_DEFAULT;
    bd.BindFlags = v->file == FILE_UAV ? D3D11_BIND_UNORDERED_ACCESS
                                       : D3D11_BIND_SHADER_RESOURCE;
    if (v->kind == VIEW_RAW)
        bd.MiscFlags = D3D11_RESOURCE_MISC_BUFFER_ALLOW_RAW_VIEWS;
    if (v->kind == VIEW_STRUCTURED) {
        bd.MiscFlags = D3D11_RESOURCE_MISC_BUFFER_STRUCTURED;
        bd.StructureByteStride = v->stride;
    }
    init.pSysMem = v->words;
    init.SysMemPitch = 0;
    init.SysMemSlicePitch = 0;
    hr = ID3D11Device_CreateBuffer(dev, &bd, &init, &res->buffers[i]);
    if (FAILED(hr))
        return hr;
    if (v->file == FILE_SRV) {
        memset(&sd, 0, sizeof sd);
        sd.ViewDimension = D3D11_SRV_DIMENSION_BUFFEREX;
        sd.Format = view_format(v);
        sd.BufferEx.FirstElement = v->first_element;
        sd.BufferEx.NumElements = v->num_elements;
        sd.BufferEx.Flags = v->kind == VIEW_RAW ? D3D11_BUFFEREX_SRV_FLAG_RAW : 0;
        hr = ID3D11Device_CreateShaderResourceView(dev, (ID3D11Resource *)res->buffers[i], &sd,
                                                   &res->srvs[i]);
    } else {
        memset(&ud, 0, sizeof ud);
        ud.ViewDimension = D3D11_UAV_DIMENSION_BUFFER;
        ud.Format = view_format(v);
        ud.Buffer.FirstElement = v->first_element;
        ud.Buffer.NumElements = v->num_elements;
        ud.Buffer.Flags = v->kind == VIEW_RAW ? D3D11_BUFFER_UAV_FLAG_RAW
                          : v->has_counter ? D3D11_BUFFER_UAV_FLAG_COUNTER : 0;
        hr = ID3D11Device_CreateUnorderedAccessView(dev, (ID3D11Resource *)res->buffers[i],
                                                    &ud, &res->uavs[i]);
    }
    if (FAILED(hr))
        return hr;
    bd.Usage = D3D11_USAGE_STAGING;
    bd.BindFlags = 0;
    bd.MiscFlags = 0;
    bd.StructureByteStride = 0;
    bd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    hr = ID3D11Device_CreateBuffer(dev, &bd, NULL, &res->staging[i]);
    if (FAILED(hr) || !v->has_counter)
        return hr;
    /* The hidden counter is read with CopyStructureCount into a small default buffer, then
     * through a staging copy like the views. */
    bd.ByteWidth = 16;
    bd.Usage = D3D11_USAGE_DEFAULT;
    bd.CPUAccessFlags = 0;
    hr = ID3D11Device_CreateBuffer(dev, &bd, NULL, &res->count_copy[i]);
    if (FAILED(hr))
        return hr;
    bd.Usage = D3D11_USAGE_STAGING;
    bd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    return ID3D11Device_CreateBuffer(dev, &bd, NULL, &res->count_staging[i]);
}

/* The final count of each view's hidden counter (counts[i] = -1 for a view without one).
 * 1: read; 0: an API call failed and its error line is printed. */
static int read_counters(ID3D11DeviceContext *ctx, const struct record *r,
                         struct resources *res, long long *counts)
{
    uint32_t i;
    for (i = 0; i < r->view_count; i++) {
        D3D11_MAPPED_SUBRESOURCE mapped;
        HRESULT hr;
        counts[i] = -1;
        if (!res->count_copy[i] || !res->uavs[i])
            continue;
        ID3D11DeviceContext_CopyStructureCount(ctx, res->count_copy[i], 0, res->uavs[i]);
        ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)res->count_staging[i],
                                         (ID3D11Resource *)res->count_copy[i]);
        hr = ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)res->count_staging[i], 0,
                                     D3D11_MAP_READ, 0, &mapped);
        if (FAILED(hr)) {
            call_failed("Map (the copy of a hidden counter)", hr);
            return 0;
        }
        counts[i] = *(const uint32_t *)mapped.pData;
        ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)res->count_staging[i], 0);
    }
    return 1;
}

static void print_views(ID3D11DeviceContext *ctx, const struct record *r,
                        struct resources *res, long long invocations)
{
    uint32_t i, w, shown;
    D3D11_MAPPED_SUBRESOURCE mapped[MAX_VIEWS];
    long long counts[MAX_VIEWS];
    if (!read_counters(ctx, r, res, counts))
        return;
    for (i = 0; i < r->view_count; i++) {
        HRESULT hr;
        mapped[i].pData = NULL;
        if (!res->staging[i])
            continue;
        ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)res->staging[i],
                                         (ID3D11Resource *)res->buffers[i]);
        hr = ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)res->staging[i], 0, D3D11_MAP_READ,
                                     0, &mapped[i]);
        if (FAILED(hr)) {
            while (i-- > 0)
                if (mapped[i].pData)
                    ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)res->staging[i], 0);
            call_failed("Map", hr);
            return;
        }
    }
    begin_line("state");
    if (invocations < 0)
        printf(",\"invocations\":null,\"views\":[");
    else
        printf(",\"invocations\":%lld,\"views\":[", invocations);
    for (i = 0, shown = 0; i < r->view_count; i++) {
        const uint32_t *words = mapped[i].pData;
        if (r->views[i].file == FILE_CB)
            continue; /* never read back, never reported */
        printf(shown++ ? ",[" : "[");
        if (!words) {
            printf("]");
            continue;
        }
        for (w = 0; w < r->views[i].word_count; w++)
            printf(w ? ",%lu" : "%lu", (unsigned long)words[w]);
        printf("]");
        ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)res->staging[i], 0);
    }
    printf("],\"counters\":[");
    for (i = 0, shown = 0; i < r->view_count; i++) {
        if (r->views[i].file == FILE_CB)
            continue;
        if (shown++)
            putchar(',');
        if (counts[i] < 0)
            printf("null");
        else
            printf("%lld", counts[i]);
    }
    printf("]}\n");
    fflush(stdout);
}

/* -1: the statistics query is unavailable. */
static long long wait_invocations(ID3D11DeviceContext *ctx, ID3D11Query *query)
{
    D3D11_QUERY_DATA_PIPELINE_STATISTICS stats;
    uint32_t spin;
    if (!query)
        return -1;
    for (spin = 0; spin < QUERY_SPINS; spin++) {
        HRESULT hr = ID3D11DeviceContext_GetData(ctx, (ID3D11Asynchronous *)query, &stats,
                                                 sizeof stats, 0);
        if (hr == S_OK)
            return (long long)stats.CSInvocations;
        if (FAILED(hr))
            return -1;
        if (spin > 64)
            Sleep(0);
    }
    return -1;
}

/* The compute shader of this DXBC: a cached one, or a new one that joins the cache (the cache
 * holds a reference; the caller gets its own). */
static HRESULT shader_for(struct device *d, const struct record *r, ID3D11ComputeShader **out)
{
    struct cached_shader *slot;
    uint8_t *copy;
    uint32_t i;
    HRESULT hr;
    for (i = 0; i < SHADER_CACHE_SIZE; i++) {
        slot = &d->shaders[i];
        if (slot->shader && slot->dxbc_len == r->dxbc_len
            && memcmp(slot->dxbc, r->dxbc, r->dxbc_len) == 0) {
            ID3D11ComputeShader_AddRef(slot->shader);
            *out = slot->shader;
            return S_OK;
        }
    }
    hr = ID3D11Device_CreateComputeShader(d->device, r->dxbc, r->dxbc_len, NULL, out);
    if (FAILED(hr))
        return hr;
    copy = malloc(r->dxbc_len ? r->dxbc_len : 1);
    if (!copy)
        return S_OK; /* not cached: the shader itself is fine */
    memcpy(copy, r->dxbc, r->dxbc_len);
    slot = &d->shaders[d->next_shader];
    d->next_shader = (d->next_shader + 1) % SHADER_CACHE_SIZE;
    if (slot->shader)
        ID3D11ComputeShader_Release(slot->shader);
    free(slot->dxbc);
    slot->dxbc = copy;
    slot->dxbc_len = r->dxbc_len;
    slot->shader = *out;
    ID3D11ComputeShader_AddRef(slot->shader);
    return S_OK;
}

static void run_record(struct device *d, const struct record *r)
{
    struct resources res;
    ID3D11UnorderedAccessView *slots[D3D11_1_UAV_SLOT_COUNT];
    ID3D11ShaderResourceView *srv_slots[D3D11_COMMONSHADER_INPUT_RESOURCE_SLOT_COUNT];
    ID3D11Buffer *cb_slots[D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT];
    UINT initial_counts[D3D11_1_UAV_SLOT_COUNT]; /* (UINT)-1: keep the current count */
    D3D11_QUERY_DESC qd;
    uint32_t i, slot_count = 0, srv_count = 0, cb_count = 0;
    long long invocations;
    HRESULT hr;
    memset(&res, 0, sizeof res);
    memset(slots, 0, sizeof slots);
    memset(srv_slots, 0, sizeof srv_slots);
    memset(cb_slots, 0, sizeof cb_slots);
    memset(initial_counts, 0xFF, sizeof initial_counts);
    if (uses_doubles(r->dxbc, r->dxbc_len) && !d->doubles) {
        reason_line("unsupported", "the program uses doubles and the device has no "
                    "double-precision shader support (D3D11_FEATURE_DOUBLES: "
                    "DoublePrecisionFloatShaderOps = FALSE)");
        return;
    }
    hr = shader_for(d, r, &res.shader);
    if (FAILED(hr)) {
        call_failed("CreateComputeShader", hr);
        return;
    }
    for (i = 0; i < r->view_count; i++) {
        const struct view *v = &r->views[i];
        uint32_t limit = d->level == D3D_FEATURE_LEVEL_11_1 ? D3D11_1_UAV_SLOT_COUNT
                                                           : D3D11_PS_CS_UAV_REGISTER_COUNT;
        char call[64];
        const char *file = v->file == FILE_UAV ? "u" : v->file == FILE_SRV ? "t" : "cb";
        if (v->file == FILE_UAV && v->slot >= limit) {
            char text[128];
            snprintf(text, sizeof text, "u%u is beyond the %u UAV slots of this feature level",
                     v->slot, limit);
            release_resources(&res, r->view_count);
            reason_line("unsupported", text);
            return;
        }
        if (v->file == FILE_UAV && v->slot + 1 > slot_count)
            slot_count = v->slot + 1;
        if (v->file == FILE_SRV && v->slot + 1 > srv_count)
            srv_count = v->slot + 1;
        if (v->file == FILE_CB && v->slot + 1 > cb_count)
            cb_count = v->slot + 1;
        if (v->kind == VIEW_NULL)
            continue;
        hr = v->file == FILE_CB ? create_constant(d->device, v, &res, i)
                                : create_view(d->device, v, &res, i);
        if (FAILED(hr)) {
            snprintf(call, sizeof call, "creating the buffer or view of %s%u", file, v->slot);
            release_resources(&res, r->view_count);
            call_failed(call, hr);
            return;
        }
        if (v->file == FILE_UAV) {
            slots[v->slot] = res.uavs[i];
            if (v->has_counter)
                initial_counts[v->slot] = v->counter;
        } else if (v->file == FILE_SRV)
            srv_slots[v->slot] = res.srvs[i];
        else
            cb_slots[v->slot] = res.buffers[i];
    }
    qd.Query = D3D11_QUERY_PIPELINE_STATISTICS;
    qd.MiscFlags = 0;
    if (FAILED(ID3D11Device_CreateQuery(d->device, &qd, &res.query)))
        res.query = NULL;
    ID3D11DeviceContext_CSSetShader(d->context, res.shader, NULL, 0);
    ID3D11DeviceContext_CSSetUnorderedAccessViews(d->context, 0, slot_count, slots,
                                                  initial_counts);
    if (srv_count)
        ID3D11DeviceContext_CSSetShaderResources(d->context, 0, srv_count, srv_slots);
    if (cb_count)
        ID3D11DeviceContext_CSSetConstantBuffers(d->context, 0, cb_count, cb_slots);
    if (res.query)
        ID3D11DeviceContext_Begin(d->context, (ID3D11Asynchronous *)res.query);
    ID3D11DeviceContext_Dispatch(d->context, 1, 1, 1);
    if (res.query)
        ID3D11DeviceContext_End(d->context, (ID3D11Asynchronous *)res.query);
    invocations = wait_invocations(d->context, res.query);
    memset(slots, 0, sizeof slots);
    memset(srv_slots, 0, sizeof srv_slots);
    memset(cb_slots, 0, sizeof cb_slots);
    ID3D11DeviceContext_CSSetUnorderedAccessViews(d->context, 0, slot_count, slots, NULL);
    if (srv_count)
        ID3D11DeviceContext_CSSetShaderResources(d->context, 0, srv_count, srv_slots);
    if (cb_count)
        ID3D11DeviceContext_CSSetConstantBuffers(d->context, 0, cb_count, cb_slots);
    ID3D11DeviceContext_CSSetShader(d->context, NULL, NULL, 0);
    hr = ID3D11Device_GetDeviceRemovedReason(d->device);
    if (FAILED(hr))
        call_failed("Dispatch (the device was removed)", hr);
    else /* "invocations": 0 says the dispatch did not run; the caller judges it */
        print_views(d->context, r, &res, invocations);
    release_resources(&res, r->view_count);
}

/* ------------------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    struct device d;
    struct record *r;
    uint8_t magic[8];
    unsigned long long start = 0, index = 0;
    uint32_t version;
    int warp = 0, i;
    const char *path = NULL;
    HRESULT hr;

    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
    SetUnhandledExceptionFilter(on_exception);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--warp"))
            warp = 1;
        else if (!strcmp(argv[i], "--start") && i + 1 < argc)
            start = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "usage: %s [--warp] [--start N] [FILE]\n", argv[0]);
            return 2;
        } else
            path = argv[i];
    }
    _setmode(_fileno(stdin), _O_BINARY);
    input = path ? fopen(path, "rb") : stdin;
    if (!input) {
        fprintf(stderr, "%s: cannot open %s\n", argv[0], path);
        return 2;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        return 2;
    hr = create_device(&d, warp);
    if (FAILED(hr)) {
        printf("{\"status\":\"no-device\",\"reason\":\"D3D11CreateDevice failed: HRESULT "
               "0x%08lx\"}\n", (unsigned long)hr);
        fflush(stdout);
        return 4;
    }
    live_device = &d;
    print_header(&d, warp);
    if (!read_exact(magic, 8, 1))
        return 0;
    if (memcmp(magic, "SM5D3D11", 8) != 0)
        malformed("expected the stream header SM5D3D11");
    version = read_u32();
    if (version != STREAM_VERSION) {
        char text[160];
        snprintf(text, sizeof text, "stream version %lu, this runner reads version %u (write "
                 "the stream with the sm5 of the same checkout)", (unsigned long)version,
                 STREAM_VERSION);
        malformed(text);
    }
    while (read_record(r)) {
        if (index++ >= start) {
            strcpy(current_id, r->id);
            strcpy(current_digest, r->digest);
            InterlockedExchange(&in_record, 1);
            run_record(&d, r);
            InterlockedExchange(&in_record, 0);
            if (FAILED(ID3D11Device_GetDeviceRemovedReason(d.device))) {
                release_device(&d);
                hr = create_device(&d, warp);
                if (FAILED(hr)) {
                    fprintf(stderr, "cannot recreate the device: 0x%08lx\n", (unsigned long)hr);
                    return 4;
                }
            }
        }
        free_record(r);
    }
    release_device(&d);
    return 0;
}
