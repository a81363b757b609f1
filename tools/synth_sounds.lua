-- tools/synth_sounds.lua: write the synthesized sounds of scripts/impetus/synth.lua as WAV files, so a
-- game can ship them as files (impetus.sound.load) instead of synthesizing at load time
-- (impetus.sound.synth). The project makes its sounds; none is downloaded.
--
--   lua5.4 tools/synth_sounds.lua OUTDIR [kind[:freq[:duration]] ...]    (default: one file per kind)
--
-- With oggenc (Debian's vorbis-tools) on the PATH, `--ogg` also encodes each as OGG Vorbis.
local root = (arg[0]:match("^(.*)/tools/[^/]*$") or ".")
package.path = root .. "/scripts/?.lua;" .. root .. "/scripts/?/init.lua;" .. package.path
local synth = require "impetus.synth"

local out, specs, ogg = arg[1], {}, false
if not out then
  io.stderr:write("usage: lua5.4 tools/synth_sounds.lua OUTDIR [--ogg] [kind[:freq[:duration]] ...]\n")
  os.exit(2)
end
for i = 2, #arg do
  if arg[i] == "--ogg" then ogg = true else specs[#specs + 1] = arg[i] end
end
if #specs == 0 then specs = { "thud", "click", "tone", "chime", "noise", "boing" } end
os.execute("mkdir -p '" .. out .. "'")
for _, spec in ipairs(specs) do
  local kind, freq, duration = spec:match("^(%a+):?([%d.]*):?([%d.]*)$")
  local def = { kind = kind, freq = tonumber(freq), duration = tonumber(duration) }
  local samples, rate = synth.render(def)
  local name = out .. "/" .. spec:gsub(":", "_") .. ".wav"
  local f = assert(io.open(name, "wb"))
  f:write(synth.wav(samples, rate))
  f:close()
  print(name)
  if ogg then
    local oggname = name:gsub("%.wav$", ".ogg")
    assert(os.execute(string.format("oggenc -Q -q 2 -o '%s' '%s'", oggname, name)), "oggenc failed")
    print(oggname)
  end
end
