-- scenes/bench/cloth_colliders_64.lua: scenes/bench/cloth_bodies_64.lua's cloth falling onto static
-- colliders in place of its 50 bodies (the same boxes and spheres at the same places).
-- Run: ./impetus bench scenes/bench/cloth_colliders_64.lua
local base = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "cloth_bodies_64.lua")
return base.cloth_scene("colliders")
