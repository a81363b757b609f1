-- scenes/bench/cloth_drop_64.lua: scenes/bench/cloth_bodies_64.lua's cloth falling onto the bare floor.
-- Run: ./impetus bench scenes/bench/cloth_drop_64.lua
local base = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "cloth_bodies_64.lua")
return base.cloth_scene("floor")
