-- scenes/cloth_heap.lua: a cloth falling onto a tumbling heap of rigid bodies. Boxes, balls, capsules
-- and hulls drop into a low pen and tumble; a cloth (implicit, 40 x 40) falls onto them while they
-- still roll. The cloth and the bodies collide both ways: the cloth drapes over the heap and its weight
-- pushes on the bodies, which carry it as they settle. Keys: C drops the cloth again, B drops more
-- bodies, F toggles a slippery cloth.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
local N = 40

local function drop_cloth(world)
  if S.cloth and S.cloth:valid() then S.cloth:destroy() end
  S.cloth = world:cloth {
    rows = N, cols = N, size = 2.6, position = { 0, 3.2, 0 }, mass = 0.8, radius = 0.02,
    stretch = 3000, shear = 60, bend = 5e-4, damping = 0.01, friction = S.slippery and 0.05 or 0.6,
    color = { 0.85, 0.62, 0.18 }, back_color = { 0.55, 0.25, 0.18 },
  }
end

-- a hull: an irregular pebble of 12 points
local function pebble(scale)
  local pts = {}
  for k = 1, 12 do
    local a, b = k * 2.39996, math.acos(1 - 2 * (k - 0.5) / 12)
    local s = scale * (0.8 + 0.4 * ((k * 0.618) % 1))
    pts[k] = { s * math.sin(b) * math.cos(a), s * math.cos(b), s * math.sin(b) * math.sin(a) }
  end
  return pts
end

local function drop_bodies(world, count, height)
  local colors = { { 0.35, 0.55, 0.8 }, { 0.45, 0.7, 0.4 }, { 0.75, 0.35, 0.35 }, { 0.6, 0.5, 0.7 } }
  for k = 1, count do
    local x, z = ((k * 0.37) % 1) * 1.6 - 0.8, ((k * 0.61) % 1) * 1.6 - 0.8
    local p, c = { x, height + 0.3 * k / count * 4, z }, colors[k % 4 + 1]
    local spin = { (k % 3) - 1, 1, ((k + 1) % 3) - 1 }
    if k % 4 == 0 then world:box { size = { 0.4, 0.3, 0.5 }, position = p, density = 300, angular_velocity = spin, color = c }
    elseif k % 4 == 1 then world:sphere { radius = 0.22, position = p, density = 300, color = c }
    elseif k % 4 == 2 then world:capsule { radius = 0.12, length = 0.5, position = p, axis = { 1, 0, 1 }, angle = 0.8, density = 300, color = c }
    else world:hull { points = pebble(0.22), position = p, density = 300, angular_velocity = spin, color = c } end
  end
end

return {
  title = "Cloth falling onto a tumbling heap",
  keys = { { "c", "drop the cloth again" }, { "b", "drop more bodies" }, { "f", "slippery / rough cloth" } },
  camera = { eye = { 3.6, 2.6, 3.8 }, target = { 0, 0.6, 0 } },
  setup = function(world)
    world.integrator = "implicit"
    world:plane { friction = 0.7, restitution = 0 }
    for k = -1, 1, 2 do -- the pen: four low walls
      world:box { static = true, size = { 0.1, 0.3, 2.2 }, position = { 1.05 * k, 0.15, 0 }, color = { 0.5, 0.5, 0.55 } }
      world:box { static = true, size = { 2.2, 0.3, 0.1 }, position = { 0, 0.15, 1.05 * k }, color = { 0.5, 0.5, 0.55 } }
    end
    drop_bodies(world, 18, 0.5)
    drop_cloth(world)
  end,
  keypressed = function(world, key)
    if key == "c" then drop_cloth(world) end
    if key == "b" then drop_bodies(world, 6, 2.5) end
    if key == "f" then
      S.slippery = not S.slippery
      for _, p in ipairs(S.cloth:particles()) do if p then p.friction = S.slippery and 0.05 or 0.6 end end
    end
  end,
  draw = function(world, gfx)
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 50, string.format("%d particles   %d bodies   %d particle contacts   %.2f ms/step", world.particle_count,
      world.body_count, p.particle_contacts, p.total), { 0.85, 0.85, 0.85, 1 })
    gfx.text(16, h - 30, "C: drop the cloth again   B: more bodies   F: slippery cloth", { 0.8, 0.8, 0.8, 1 })
  end,
}
