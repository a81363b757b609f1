/* audio.c: the "impetus.audio" module of the host, sound through SDL2_mixer for scripts/impetus/sound.lua.
 *
 *   audio.open([driver]) -> true | nil, message   open the device (44.1 kHz stereo, 32 voices)
 *   audio.close()
 *   audio.load(path) -> Chunk | nil, message       a WAV or OGG file, decoded to the device's format
 *   audio.load_wav_bytes(s) -> Chunk | nil, message  a WAV held in a string (synthesized sounds)
 *   audio.play(chunk, volume, pitch, pan, loop) -> voice | nil, message
 *   audio.stop(chunk)                              halt every voice playing the chunk (or its pitched copies)
 *   audio.info() -> frequency, channels, driver    of the open device
 *   chunk:frames() -> sample frames of the decoded sound at the device's rate
 *
 * SDL_mixer plays chunks as they are, so a pitch p is a copy of the chunk resampled from p times the
 * device rate to the device rate by SDL_AudioStream (SDL's own resampler): p = 2 is twice as fast and
 * an octave higher. Copies are kept per chunk for pitches quantized to 1/48 octave, a few at a time. */
#include <SDL.h>
#include <SDL_mixer.h>
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#define AUDIO_CHUNK "impetus.audio.Chunk"
#define PITCH_SLOTS 8                /* pitched copies kept per chunk                                */
#define VOICES 32

typedef struct {
    Mix_Chunk *chunk;
    struct { int step; Mix_Chunk *chunk; } pitched[PITCH_SLOTS]; /* step: pitch = 2^(step/48)          */
    int next_slot;                   /* the slot the next new copy replaces                          */
} AudioChunk;

static int device_open;
static int device_freq, device_channels;
static Uint16 device_format;

/* halt the voices playing c and free it */
static void free_mix_chunk(Mix_Chunk *c)
{
    if (!c) return;
    if (device_open)
        for (int v = 0; v < VOICES; v++)
            if (Mix_GetChunk(v) == c) Mix_HaltChannel(v);
    Mix_FreeChunk(c);
}

static void chunk_release(AudioChunk *a)
{
    for (int i = 0; i < PITCH_SLOTS; i++) {
        free_mix_chunk(a->pitched[i].chunk);
        a->pitched[i].chunk = NULL;
    }
    free_mix_chunk(a->chunk);
    a->chunk = NULL;
}

static int chunk_gc(lua_State *L)
{
    AudioChunk *a = luaL_checkudata(L, 1, AUDIO_CHUNK);
    if (device_open) chunk_release(a);
    return 0;
}

static AudioChunk *check_chunk(lua_State *L, int idx, const char *fn)
{
    AudioChunk *a = luaL_testudata(L, idx, AUDIO_CHUNK);
    if (!a) luaL_error(L, "audio.%s: argument %d must be a Chunk", fn, idx);
    if (!a->chunk) luaL_error(L, "audio.%s: the chunk was freed (the device was closed)", fn);
    return a;
}

static int bytes_per_frame(void) { return SDL_AUDIO_BITSIZE(device_format) / 8 * device_channels; }

static int chunk_frames(lua_State *L)
{
    AudioChunk *a = check_chunk(L, 1, "frames");
    lua_pushinteger(L, (lua_Integer)(a->chunk->alen / (Uint32)bytes_per_frame()));
    return 1;
}

static int push_chunk(lua_State *L, Mix_Chunk *c)
{
    if (!c) {
        lua_pushnil(L);
        lua_pushstring(L, Mix_GetError());
        return 2;
    }
    AudioChunk *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    a->chunk = c;
    luaL_setmetatable(L, AUDIO_CHUNK);
    return 1;
}

/* With no sound card (no /dev/snd) the drivers that open one anyway load alsa-lib (ALSA, and sndio on
 * top of it), which prints a page of "ALSA lib ... cannot find card" errors to stderr before the open
 * fails. There only the sound servers SDL knows are tried (pulseaudio, pipewire, jack: a server may
 * play elsewhere); OSS's /dev/dsp is missing as well, and disk and dummy are never tried unasked (they
 * are not devices). A machine without sound stays quiet, and the sound stays off either way. */
static void skip_card_drivers(void)
{
    static const char *const card[] = {"alsa", "sndio", "dsp", "disk", "dummy", NULL};
    char list[256] = "";
    for (int i = 0; i < SDL_GetNumAudioDrivers(); i++) {
        const char *name = SDL_GetAudioDriver(i);
        int skip = 0;
        for (const char *const *c = card; *c && !skip; c++) skip = !strcmp(*c, name);
        if (skip || strlen(list) + strlen(name) + 2 > sizeof list) continue;
        if (list[0]) strcat(list, ",");
        strcat(list, name);
    }
    SDL_SetHint(SDL_HINT_AUDIODRIVER, list[0] ? list : "none");
}

static int audio_open(lua_State *L)
{
    if (device_open) {
        lua_pushboolean(L, 1);
        return 1;
    }
    const char *driver = luaL_optstring(L, 1, NULL);
    int no_card = 0;
    if (driver) SDL_SetHint(SDL_HINT_AUDIODRIVER, driver);
    else if (!SDL_getenv("SDL_AUDIODRIVER") && access("/dev/snd", F_OK) != 0) skip_card_drivers(), no_card = 1;
    if (SDL_InitSubSystem(SDL_INIT_AUDIO) != 0) {
        lua_pushnil(L);
        if (no_card) lua_pushstring(L, "no audio device: no sound card (/dev/snd) and no sound server");
        else lua_pushfstring(L, "no audio device: %s", SDL_GetError());
        return 2;
    }
    Mix_Init(MIX_INIT_OGG);
    if (Mix_OpenAudio(44100, AUDIO_S16SYS, 2, 1024) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot open the audio device: %s", Mix_GetError());
        Mix_Quit();
        SDL_QuitSubSystem(SDL_INIT_AUDIO);
        return 2;
    }
    Mix_AllocateChannels(VOICES);
    Mix_QuerySpec(&device_freq, &device_format, &device_channels);
    device_open = 1;
    lua_pushboolean(L, 1);
    return 1;
}

static int audio_close(lua_State *L)
{
    (void)L;
    if (!device_open) return 0;
    Mix_HaltChannel(-1);
    /* chunks still referenced from Lua are freed by their __gc only while the device is open; free
     * none here: Mix_CloseAudio leaves loaded chunks valid memory, and a closed device never plays */
    Mix_CloseAudio();
    Mix_Quit();
    SDL_QuitSubSystem(SDL_INIT_AUDIO);
    device_open = 0;
    return 0;
}

static void check_device(lua_State *L, const char *fn)
{
    if (!device_open) luaL_error(L, "audio.%s: the audio device is not open (audio.open first)", fn);
}

static int audio_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    check_device(L, "load");
    return push_chunk(L, Mix_LoadWAV(path));
}

static int audio_load_wav_bytes(lua_State *L)
{
    size_t n;
    const char *bytes = luaL_checklstring(L, 1, &n);
    check_device(L, "load_wav_bytes");
    SDL_RWops *rw = SDL_RWFromConstMem(bytes, (int)n);
    if (!rw) return luaL_error(L, "audio.load_wav_bytes: %s", SDL_GetError());
    return push_chunk(L, Mix_LoadWAV_RW(rw, 1));
}

/* a copy of c played `pitch` times faster: the frames resampled from pitch * freq to freq */
static Mix_Chunk *resample(const Mix_Chunk *c, double pitch)
{
    int src_rate = (int)lround(device_freq * pitch);
    SDL_AudioStream *s = SDL_NewAudioStream(device_format, (Uint8)device_channels, src_rate, device_format,
                                            (Uint8)device_channels, device_freq);
    if (!s) return NULL;
    Mix_Chunk *out = NULL;
    if (SDL_AudioStreamPut(s, c->abuf, (int)c->alen) == 0 && SDL_AudioStreamFlush(s) == 0) {
        int avail = SDL_AudioStreamAvailable(s);
        Uint8 *buf = avail > 0 ? SDL_malloc((size_t)avail) : NULL;
        if (buf) {
            int got = SDL_AudioStreamGet(s, buf, avail);
            if (got > 0) out = Mix_QuickLoad_RAW(buf, (Uint32)got);
            if (out) out->allocated = 1; /* Mix_FreeChunk frees buf with SDL_free */
            else SDL_free(buf);
        }
    }
    SDL_FreeAudioStream(s);
    return out;
}

/* the chunk for a pitch: the original for 1, else a cached resampled copy */
static Mix_Chunk *pitched_chunk(AudioChunk *a, double pitch)
{
    int step = (int)lround(48.0 * log2(pitch));
    if (step == 0) return a->chunk;
    for (int i = 0; i < PITCH_SLOTS; i++)
        if (a->pitched[i].chunk && a->pitched[i].step == step) return a->pitched[i].chunk;
    Mix_Chunk *c = resample(a->chunk, pow(2.0, step / 48.0));
    if (!c) return a->chunk;
    int slot = a->next_slot;
    a->next_slot = (slot + 1) % PITCH_SLOTS;
    free_mix_chunk(a->pitched[slot].chunk);
    a->pitched[slot].chunk = c;
    a->pitched[slot].step = step;
    return c;
}

static int audio_play(lua_State *L)
{
    AudioChunk *a = check_chunk(L, 1, "play");
    double volume = luaL_checknumber(L, 2), pitch = luaL_checknumber(L, 3), pan = luaL_checknumber(L, 4);
    int loop = lua_toboolean(L, 5);
    check_device(L, "play");
    if (!(volume >= 0 && volume <= 1)) return luaL_error(L, "audio.play: volume must be in 0..1");
    if (!(pitch >= 0.125 && pitch <= 8)) return luaL_error(L, "audio.play: pitch must be in 0.125..8");
    if (!(pan >= -1 && pan <= 1)) return luaL_error(L, "audio.play: pan must be in -1..1");
    Mix_Chunk *c = pitched_chunk(a, pitch);
    int voice = Mix_PlayChannel(-1, c, loop ? -1 : 0);
    if (voice < 0) {
        lua_pushnil(L);
        lua_pushstring(L, Mix_GetError()); /* every voice busy: this sound is skipped */
        return 2;
    }
    Mix_Volume(voice, (int)lround(volume * MIX_MAX_VOLUME));
    /* equal-power pan: gains cos and sin of (pan + 1) pi / 4, scaled by sqrt 2 so that the centre
     * plays both sides at full volume, and clipped at full volume */
    double angle = (pan + 1.0) * M_PI / 4.0;
    double left = fmin(1.0, M_SQRT2 * cos(angle)), right = fmin(1.0, M_SQRT2 * sin(angle));
    Mix_SetPanning(voice, (Uint8)lround(255 * left), (Uint8)lround(255 * right));
    lua_pushinteger(L, voice + 1);
    return 1;
}

static int audio_stop(lua_State *L)
{
    AudioChunk *a = check_chunk(L, 1, "stop");
    if (!device_open) return 0;
    for (int v = 0; v < VOICES; v++) {
        Mix_Chunk *c = Mix_GetChunk(v);
        if (!Mix_Playing(v) || !c) continue;
        int mine = c == a->chunk;
        for (int i = 0; i < PITCH_SLOTS && !mine; i++) mine = c == a->pitched[i].chunk;
        if (mine) Mix_HaltChannel(v);
    }
    return 0;
}

static int audio_info(lua_State *L)
{
    check_device(L, "info");
    lua_pushinteger(L, device_freq);
    lua_pushinteger(L, device_channels);
    lua_pushstring(L, SDL_GetCurrentAudioDriver());
    return 3;
}

int luaopen_impetus_audio(lua_State *L)
{
    if (luaL_newmetatable(L, AUDIO_CHUNK)) {
        static const luaL_Reg meta[] = {{"__gc", chunk_gc}, {"frames", chunk_frames}, {NULL, NULL}};
        luaL_setfuncs(L, meta, 0);
        lua_pushvalue(L, -1);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {{"open", audio_open},       {"close", audio_close},
                                   {"load", audio_load},       {"load_wav_bytes", audio_load_wav_bytes},
                                   {"play", audio_play},       {"stop", audio_stop},
                                   {"info", audio_info},       {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
