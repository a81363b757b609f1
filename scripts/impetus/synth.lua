-- synth: small synthesized sounds for games (impetus.sound.synth), and WAV bytes for them. The project
-- makes its sounds rather than downloading them; tools/synth_sounds.lua writes them as WAV files.
--
--   kind = "thud"   a low, quickly damped knock (crates landing): freq 90 Hz, duration 0.25 s
--   kind = "click"  a short bright tick (a button, a peg): freq 2200 Hz, duration 0.04 s
--   kind = "tone"   a sine with a soft attack and release: freq 440 Hz, duration 0.3 s
--   kind = "chime"  a bell: a few inharmonic partials decaying at different rates: freq 880 Hz, 1.2 s
--   kind = "noise"  a burst of filtered noise (a crash, a whoosh): duration 0.3 s, freq = cutoff 1500 Hz
--   kind = "boing"  a sine whose pitch falls (a bumper, a spring): freq 600 Hz, duration 0.35 s
-- every kind also takes volume (0..1, default 0.8) and seed (noise); rate is 44100 samples per second.
local synth = {}

synth.RATE = 44100

local KINDS = {
  thud = { freq = 90, duration = 0.25 },
  click = { freq = 2200, duration = 0.04 },
  tone = { freq = 440, duration = 0.3 },
  chime = { freq = 880, duration = 1.2 },
  noise = { freq = 1500, duration = 0.3 },
  boing = { freq = 600, duration = 0.35 },
}
local KEYS = { kind = true, freq = true, duration = true, volume = true, seed = true }

local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

-- a reproducible uniform generator in -1..1 (xorshift64)
local function noise_source(seed)
  local s = (seed or 1) * 2654435761 + 1
  return function()
    s = s ~ (s << 13)
    s = s ~ (s >> 7)
    s = s ~ (s << 17)
    return ((s >> 11) % 2000001) / 1000000 - 1
  end
end

-- the samples (floats in -1..1) and the rate of a synthesized sound
function synth.render(def)
  if type(def) ~= "table" then error("a sound definition table {kind = \"thud\", ...} is needed", 0) end
  for k in pairs(def) do
    if not KEYS[k] then error("unknown field '" .. tostring(k) .. "' (known: kind, freq, duration, volume, seed)", 0) end
  end
  local base = KINDS[def.kind]
  if not base then error("field 'kind' must be one of thud, click, tone, chime, noise, boing (got " .. tostring(def.kind) .. ")", 0) end
  local freq, duration, volume = def.freq or base.freq, def.duration or base.duration, def.volume or 0.8
  if not finite(freq) or freq < 20 or freq > 20000 then error("field 'freq' must be a frequency in 20..20000 Hz", 0) end
  if not finite(duration) or duration <= 0 or duration > 10 then error("field 'duration' must be in (0, 10] seconds", 0) end
  if not finite(volume) or volume < 0 or volume > 1 then error("field 'volume' must be in 0..1", 0) end
  local rate = synth.RATE
  local n = math.max(1, math.floor(duration * rate + 0.5))
  local out = {}
  local two_pi = 2 * math.pi
  local kind = def.kind
  local rnd = noise_source(def.seed)
  local low, phase = 0, 0
  -- a 5 ms fade at both ends keeps every sound free of clicks
  local fade = math.max(1, math.floor(0.005 * rate))
  for i = 1, n do
    local t = (i - 1) / rate
    local v
    if kind == "thud" then
      -- a damped sine whose pitch drops a little, plus a noisy attack
      local f = freq * (1 + 0.6 * math.exp(-t * 40))
      phase = phase + two_pi * f / rate
      v = math.sin(phase) * math.exp(-t * 18) + 0.3 * rnd() * math.exp(-t * 120)
    elseif kind == "click" then
      phase = phase + two_pi * freq / rate
      v = (0.6 * math.sin(phase) + 0.4 * rnd()) * math.exp(-t * 150)
    elseif kind == "tone" then
      phase = phase + two_pi * freq / rate
      local env = math.min(1, t / 0.01) * math.min(1, (duration - t) / 0.05)
      v = math.sin(phase) * env
    elseif kind == "chime" then
      -- partials of a struck bar (ratios 1, 2.76, 5.40, 8.93), higher ones dying faster
      v = 0
      local ratios, decays, gains = { 1, 2.76, 5.40, 8.93 }, { 3, 6, 10, 16 }, { 1, 0.5, 0.25, 0.12 }
      for k = 1, 4 do v = v + gains[k] * math.sin(two_pi * freq * ratios[k] * t) * math.exp(-t * decays[k]) end
      v = v * 0.55
    elseif kind == "noise" then
      -- white noise through a one-pole low-pass at freq, fading out
      local a = 1 - math.exp(-two_pi * freq / rate)
      low = low + a * (rnd() - low)
      v = low * 2.5 * math.exp(-t * 4 / duration)
    else -- boing
      local f = freq * (0.55 + 0.45 * math.exp(-t * 9))
      phase = phase + two_pi * f / rate
      v = math.sin(phase + 0.8 * math.sin(phase * 0.5)) * math.exp(-t * 7)
    end
    local edge = math.min(1, (i - 1) / fade, (n - i) / fade)
    out[i] = math.max(-1, math.min(1, v * volume * edge))
  end
  return out, rate
end

-- 16-bit mono PCM WAV bytes of samples in -1..1
function synth.wav(samples, rate)
  rate = rate or synth.RATE
  local n = #samples
  local parts = { "RIFF", string.pack("<I4", 36 + 2 * n), "WAVE", "fmt ",
    string.pack("<I4I2I2I4I4I2I2", 16, 1, 1, rate, rate * 2, 2, 16), "data", string.pack("<I4", 2 * n) }
  local chunk, pcm = {}, {}
  for i = 1, n do
    chunk[#chunk + 1] = string.pack("<i2", math.floor(samples[i] * 32767 + 0.5))
    if #chunk == 4096 then pcm[#pcm + 1] = table.concat(chunk) chunk = {} end
  end
  pcm[#pcm + 1] = table.concat(chunk)
  parts[#parts + 1] = table.concat(pcm)
  return table.concat(parts)
end

return synth
