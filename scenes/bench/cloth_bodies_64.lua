-- scenes/bench/cloth_bodies_64.lua: a 64 x 64 cloth (4,096 particles, implicit, dt 1/60) falling onto
-- 50 dynamic bodies (boxes and spheres) resting on the floor: the cloth and the bodies collide both
-- ways. Its references, built by cloth_scene below: scenes/bench/cloth_drop_64.lua, the same cloth
-- onto the bare floor, and scenes/bench/cloth_colliders_64.lua, the same cloth onto static colliders
-- of the same shapes at the same places (the same drape, no bodies to move).
-- Run: ./impetus bench scenes/bench/cloth_bodies_64.lua
local function cloth_scene(under)
  return {
    title = "64 x 64 cloth onto " .. (under == "bodies" and "50 bodies" or under == "colliders" and "50 colliders" or "the floor") .. ", implicit",
    dt = 1 / 60,
    camera = { eye = { 3.5, 3, 4 }, target = { 0, 0.5, 0 } },
    cloth_scene = cloth_scene,
    setup = function(world)
      world.integrator = "implicit"
      world:plane { friction = 0.6, restitution = 0 }
      if under ~= "floor" then
        local static = under == "colliders"
        for k = 0, 49 do
          local p = { (k % 7) * 0.42 - 1.26, 0.16, (k // 7) * 0.42 - 1.26 }
          if k % 2 == 0 then world:box { size = { 0.3, 0.3, 0.3 }, position = p, density = not static and 300 or nil, static = static or nil }
          else world:sphere { radius = 0.15, position = p, density = not static and 300 or nil, static = static or nil } end
        end
      end
      world:cloth { rows = 64, cols = 64, size = 3, normal = { 0, 1, 0 }, position = { 0, 1.2, 0 },
        mass = 1, radius = 0.02, stretch = 2000, shear = 50, bend = 2e-4, damping = 0.01 }
    end,
  }
end
return cloth_scene("bodies")
