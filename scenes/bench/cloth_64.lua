-- scenes/bench/cloth_64.lua: scenes/bench/cloth_32.lua at 64 x 64 (4,096 particles).
-- Run: ./impetus bench scenes/bench/cloth_64.lua
local base = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "cloth_32.lua")
return base.cloth_scene(64)
