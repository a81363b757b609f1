-- Sound (scripts/impetus/sound.lua, synth.lua, render/audio.c): files checked and plays counted
-- headless, the synthesized sounds' WAV bytes, impact volumes from the impact speed of a dropped ball,
-- and the SDL2_mixer path in a window with SDL's dummy audio driver.
local helpers = require "helpers"
local impetus = require "impetus"
local synth = require "impetus.synth"

describe("sound", function()
  it("loads WAV and OGG files headless, silently, and counts the plays", function()
    local dir = helpers.tmpdir()
    local wav = dir .. "/click.wav"
    helpers.write(wav, synth.wav((synth.render { kind = "click" })))
    local s = impetus.sound.load(wav)
    assert.is_false(impetus.sound.available())
    assert.are.equal(0, s:play { volume = 0.25, pitch = 1.5, pan = 0.5 })
    assert.are.equal(1, s.plays)
    assert.are.same({ volume = 0.25, pitch = 1.5, pan = 0.5 }, s.last)
    assert.are.equal(s, impetus.sound.load(wav), "cached by path")
    assert.are.equal("ogg", impetus.sound.load("spec/fixtures/tone.ogg").kind)
    helpers.write(dir .. "/not.wav", "hello, I am text")
    assert.has_error(function() impetus.sound.load(dir .. "/not.wav") end,
      "impetus.sound.load: " .. dir .. "/not.wav is neither a WAV (RIFF/WAVE) nor an OGG file")
    assert.has_error(function() impetus.sound.load(dir .. "/missing.wav") end)
    assert.has_error(function() s:play { volume = 2 } end, "sound:play: option 'volume' must be a number in 0..1")
    assert.has_error(function() s:play { pitch = 0 } end)
    assert.has_error(function() s:play { speed = 1 } end, "sound:play: unknown option 'speed' (known: volume, pitch, pan, loop)")
    -- arguments beyond those a function takes, and stray entries in a list option, name themselves
    local plays = s.plays
    assert.has_error(function() s:play({ volume = 0.5 }, 2) end, "sound:play([opts]): unexpected argument #2 (number)")
    assert.has_error(function() s:stop(true) end, "sound:stop(): unexpected argument #1 (boolean)")
    assert.has_error(function() impetus.sound.load(wav, "loop") end, "impetus.sound.load(path): unexpected argument #2 (string)")
    assert.has_error(function() impetus.sound.synth({ kind = "click" }, {}) end, "impetus.sound.synth(def): unexpected argument #2 (table)")
    assert.has_error(function() impetus.sound.volume(0.5, 1) end, "impetus.sound.volume([v]): unexpected argument #2 (number)")
    assert.has_error(function() impetus.sound.impact(s, { speed = 3 }, {}, 1) end,
      "impetus.sound.impact(sound, e [, opts]): unexpected argument #4 (number)")
    local w = impetus.world()
    local ball = w:sphere { position = { 0, 1, 0 } }
    assert.has_error(function() impetus.sound.impacts(w, s, {}, 1) end,
      "impetus.sound.impacts(world, sound [, opts]): unexpected argument #4 (number)")
    assert.has_error(function() impetus.sound.impacts(w, s, { bodies = { ball, extra = ball } }) end,
      "impetus.sound.impacts: option 'bodies' must be a list of bodies: unexpected entry ['extra']")
    assert.has_error(function() impetus.sound.impacts(w, s, { bodies = { ball, 5 } }) end,
      "impetus.sound.impacts: option 'bodies'[2] must be a Body or a Collider (got number)")
    assert.are.equal(plays, s.plays, "nothing refused was played")
    os.execute("rm -rf " .. dir)
  end)

  it("synthesizes sounds of the asked length into 16-bit mono WAV bytes", function()
    for _, kind in ipairs { "thud", "click", "tone", "chime", "noise", "boing" } do
      local samples, rate = synth.render { kind = kind, duration = 0.2 }
      assert.are.equal(44100, rate)
      assert.are.equal(8820, #samples, kind)
      local peak = 0
      for _, v in ipairs(samples) do peak = math.max(peak, math.abs(v)) end
      assert.is_true(peak > 0.05 and peak <= 1, kind .. " peak " .. peak)
      assert.are.equal(0, samples[1], kind .. " starts at silence (no click)")
      local bytes = synth.wav(samples, rate)
      assert.are.equal("RIFF", bytes:sub(1, 4))
      assert.are.equal(44 + 2 * #samples, #bytes)
      local channels, srate, bits = string.unpack("<I2I4", bytes, 23), string.unpack("<I4", bytes, 25), string.unpack("<I2", bytes, 35)
      assert.are.same({ 1, 44100, 16 }, { channels, srate, bits })
      local s100 = string.unpack("<i2", bytes, 45 + 2 * 99)
      assert.are.equal(math.floor(samples[100] * 32767 + 0.5), s100)
    end
    local tone = synth.render { kind = "tone", freq = 441, duration = 0.1 }
    -- a 441 Hz sine: 100 samples per period, so samples 50 apart are opposite
    helpers.near(tone[1000] + tone[1050], 0, 1e-3, "half a period apart")
    assert.has_error(function() synth.render { kind = "kazoo" } end)
    assert.has_error(function() impetus.sound.synth { kind = "tone", freq = -5 } end,
      "impetus.sound.synth: field 'freq' must be a frequency in 20..20000 Hz")
  end)

  it("plays impacts at a volume that grows with the impact speed", function()
    local w = impetus.world()
    w:plane { normal = { 0, 1, 0 } }
    local ball = w:sphere { radius = 0.5, position = { 0, 0.5 + 1.8, 0 } }
    w:sphere { radius = 0.5, position = { 5, 0.5 + 0.2, 0 } }
    local bang = impetus.sound.synth { kind = "thud" }
    impetus.sound.impacts(w, bang, { min_speed = 0.5, max_speed = 10, bodies = { ball } })
    local speed
    for _ = 1, 400 do
      w:step(1 / 240)
      local plays = bang.plays
      impetus.sound.dispatch(w)
      if bang.plays > plays then
        for _, e in ipairs(w:contact_events().begin) do speed = math.max(speed or 0, e.speed) end
        break
      end
    end
    assert.is_truthy(speed, "the ball landed and the sound played")
    helpers.near(speed, math.sqrt(2 * 9.81 * 1.8), 0.15, "impact speed from a 1.8 m drop")
    helpers.near(bang.last.volume, (speed - 0.5) / (10 - 0.5), 1e-12, "volume")
    assert.are.equal(1, bang.plays, "one sound for the landing; the other ball is not in `bodies`")
    -- impetus.sound.impact, for an on_contact handler: below min_speed it is silent
    assert.are.equal(0, impetus.sound.impact(bang, { speed = 0.2 }))
    helpers.near(impetus.sound.impact(bang, { speed = 20 }, { volume = 0.5 }), 0.5, 1e-12, "capped at volume")
    assert.has_error(function() impetus.sound.impacts(w, bang, { loudness = 1 }) end)
    impetus.sound.impacts(w, nil)
  end)

  it("plays through SDL2_mixer in a window, with OGG and pitch, on SDL's dummy audio driver", function()
    local out, code = helpers.run_host("--frames 20 --size 320x240 spec/fixtures/sound_scene.lua",
      "SDL_VIDEODRIVER=offscreen SDL_AUDIODRIVER=dummy")
    assert.are.equal(0, code, out)
    assert.matches("available\ttrue", out, 1, true)
    assert.is_true(tonumber(out:match("voice\t(%d+)")) >= 1, out)
    -- 0.25 s at the device's 44.1 kHz
    assert.are.equal(11025, tonumber(out:match("thud frames\t(%d+)")))
    -- the OGG tone is 0.5 s (the encoder may pad a little)
    local ogg = tonumber(out:match("ogg frames\t(%d+)"))
    assert.is_true(ogg and math.abs(ogg - 22050) < 1200, out)
    assert.is_true(tonumber(out:match("pitched voice\t(%d+)")) >= 1, out)
  end)

  it("opens no device and prints nothing where there is no sound card and no sound server", function()
    local dir = helpers.tmpdir()
    helpers.write(dir .. "/open.lua", [[
      local ok, err = require("impetus.audio").open()
      print("opened", ok, err)
      return {}]])
    -- no card here: a sound server in the environment is kept out of reach
    local out, code = helpers.run_host("--headless --steps 1 " .. dir .. "/open.lua",
      "-u SDL_AUDIODRIVER PULSE_SERVER=unix:/nonexistent PIPEWIRE_REMOTE=/nonexistent XDG_RUNTIME_DIR=" .. dir)
    os.execute("rm -rf " .. dir)
    assert.are.equal(0, code, out)
    local f = io.open("/dev/snd", "r")
    if f then f:close() return end -- a machine with a sound card opens it
    assert.matches("opened\tnil\tno audio device: no sound card (/dev/snd) and no sound server", out, 1, true)
    assert.is_nil(out:find("ALSA lib", 1, true), "alsa-lib's errors reached the terminal:\n" .. out)
    assert.is_nil(out:find("play stream", 1, true), out)
  end)
end)
