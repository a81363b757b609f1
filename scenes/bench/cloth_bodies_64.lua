-- scenes/bench/cloth_bodies_64.lua: a 64 x 64 cloth (4,096 particles, implicit, dt 1/60) falling onto
-- 50 dynamic bodies (boxes, spheres, capsules) resting on the floor: the cloth and the bodies collide
-- both ways. scenes/bench/cloth_drop_64.lua is the same cloth falling onto the bare floor, the
-- figure to compare with (cloth_scene below builds both).
-- Run: ./impetus bench scenes/bench/cloth_drop_64.lua && ./impetus bench scenes/bench/cloth_bodies_64.lua
local function cloth_scene(with_bodies)
  return {
    title = "64 x 64 cloth " .. (with_bodies and "onto 50 bodies" or "onto the floor") .. ", implicit",
    dt = 1 / 60,
    camera = { eye = { 3.5, 3, 4 }, target = { 0, 0.5, 0 } },
    cloth_scene = cloth_scene,
    setup = function(world)
      world.integrator = "implicit"
      world:plane { friction = 0.6, restitution = 0 }
      if with_bodies then
        for k = 0, 49 do
          local x, z = (k % 7) * 0.42 - 1.26, (k // 7) * 0.42 - 1.26
          local p = { x, 0.16, z }
          if k % 3 == 0 then world:box { size = { 0.3, 0.3, 0.3 }, position = p, density = 300 }
          elseif k % 3 == 1 then world:sphere { radius = 0.15, position = p, density = 300 }
          else world:capsule { radius = 0.12, length = 0.25, position = { x, 0.12, z }, density = 300 } end
        end
      end
      world:cloth { rows = 64, cols = 64, size = 3, normal = { 0, 1, 0 }, position = { 0, 1.2, 0 },
        mass = 1, radius = 0.02, stretch = 2000, shear = 50, bend = 2e-4, damping = 0.01 }
    end,
  }
end
return cloth_scene(true)
