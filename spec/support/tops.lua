-- Spinning and swinging bodies with closed forms, shared by gyroscopic_spec.lua and the figures.
local impetus = require "impetus"
local tops = {}
local g = 9.81

-- The pinned top: a 0.04 x 0.6 x 0.6 m plate of 14.4 kg spinning at `spin` rad/s about its normal (x),
-- pinned by a ball joint on that axis 0.3 m from its centre, started on its steady precession with the
-- axis level. A fast top precesses at Omega = m g r / (I3 spin) (the torque m g r turns L = I3 spin).
-- Returns the world, the plate, the joint and Omega.
function tops.pinned_top(mode, spin)
  local w = impetus.world {}
  w.contact = mode
  w.sleeping = false
  local m, r = 14.4, 0.3
  local I3 = m * (0.6 ^ 2 + 0.6 ^ 2) / 12
  local Om = m * g * r / (I3 * spin)
  local b = w:box { size = { 0.04, 0.6, 0.6 }, mass = m, position = { r, 1, 0 }, angular_velocity = { spin, Om, 0 },
    velocity = { 0, 0, -r * Om } }
  local j = w:joint { type = "point", a = b, anchor = { 0, 1, 0 } }
  return w, b, j, Om
end

-- the angle b's centre turned about the vertical through the origin over `steps` calls of step(),
-- unwrapped, positive clockwise seen from above (the tops' sense)
function tops.turned(b, steps, step)
  local total, last = 0, math.atan(b.position[3], b.position[1])
  for _ = 1, steps do
    step()
    local now = math.atan(b.position[3], b.position[1])
    local d = now - last
    if d > math.pi then d = d - 2 * math.pi elseif d < -math.pi then d = d + 2 * math.pi end
    total, last = total + d, now
  end
  return -total
end

-- the vertical angular momentum about the point p (the body's own plus its centre's m x v)
function tops.vertical_momentum(b, p)
  local x, v = b.position, b.velocity
  local rx, rz = x[1] - p[1], x[3] - p[3]
  return b.angular_momentum[2] + b.mass * (rz * v[1] - rx * v[3])
end

-- The conical pendulum: a rod (a 0.05 x 1 x 0.05 m box of 2 kg) on a ball joint at its top end, its axis
-- at alpha from the vertical, turning about the vertical at W without spinning about its axis. Steady
-- when m g d sin(alpha) = (I1 - I3) W^2 sin(alpha) cos(alpha) (d the centre's distance, I1 the transverse
-- inertia about the pivot, I3 the axial one). Returns the world, the rod and W.
function tops.conical_pendulum(mode, alpha)
  local w = impetus.world {}
  w.contact = mode
  w.sleeping = false
  local m, L, a = 2, 1, 0.05
  local d = L / 2
  local I1 = m * (L * L + a * a) / 12 + m * d * d
  local I3 = m * (a * a + a * a) / 12
  local W = math.sqrt(m * g * d / ((I1 - I3) * math.cos(alpha)))
  local c = { d * math.sin(alpha), 2 - d * math.cos(alpha), 0 }
  local b = w:box { size = { a, L, a }, mass = m, position = c, orientation = impetus.quat.from_axis_angle({ 0, 0, 1 }, alpha),
    angular_velocity = { 0, W, 0 }, velocity = { 0, 0, -W * d * math.sin(alpha) } }
  w:joint { type = "point", a = b, anchor = { 0, 2, 0 } }
  return w, b, W
end

-- The intermediate axis: a 1 x 2 x 3 m box of 3 kg spinning at 4 rad/s about y (its middle inertia) with
-- 0.02 rad/s about x and z, free or on a ball joint at its centre of mass. Its body-frame omega_y changes
-- sign every 2 K(k) / lambda s (Euler's equations solved by Jacobi's elliptic functions, Landau-Lifshitz
-- section 37). Returns the world, the box and that half period.
function tops.flipping_box(mode, jointed)
  local w = impetus.world { gravity = jointed and { 0, -g, 0 } or { 0, 0, 0 } }
  w.contact = mode
  w.sleeping = false
  local m, w0 = 3, { 0.02, 4, 0.02 }
  local Iz, Iy, Ix = m * (1 + 4) / 12, m * (1 + 9) / 12, m * (4 + 9) / 12 -- I1 < I2 < I3
  local b = w:box { size = { 1, 2, 3 }, mass = m, position = { 0, 5, 0 }, angular_velocity = w0 }
  if jointed then w:joint { type = "point", a = b, anchor = { 0, 5, 0 } } end
  local I1, I2, I3 = Iz, Iy, Ix
  local E2 = I3 * w0[1] ^ 2 + I2 * w0[2] ^ 2 + I1 * w0[3] ^ 2 -- 2 E
  local L2 = (I3 * w0[1]) ^ 2 + (I2 * w0[2]) ^ 2 + (I1 * w0[3]) ^ 2
  local lam, k2
  if L2 > E2 * I2 then
    lam = math.sqrt((I3 - I2) * (L2 - E2 * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (E2 * I3 - L2) / ((I3 - I2) * (L2 - E2 * I1))
  else
    lam = math.sqrt((I2 - I1) * (E2 * I3 - L2) / (I1 * I2 * I3))
    k2 = (I3 - I2) * (L2 - E2 * I1) / ((I2 - I1) * (E2 * I3 - L2))
  end
  local a, bb = 1, math.sqrt(1 - k2) -- K(k) = pi / (2 AGM(1, sqrt(1 - k^2)))
  for _ = 1, 40 do a, bb = (a + bb) / 2, math.sqrt(a * bb) end
  return w, b, 2 * (math.pi / (2 * a)) / lam
end

-- the mean time between sign changes of the body-frame omega_y over `seconds`, each crossing found by
-- linear interpolation between steps
function tops.flip_half_period(w, b, dt, seconds)
  local q = impetus.quat
  local function wy()
    local om, R = b.angular_velocity, q.to_matrix(b.orientation)
    return R[1][2] * om[1] + R[2][2] * om[2] + R[3][2] * om[3]
  end
  local t, last, crossings = 0, wy(), {}
  for _ = 1, math.floor(seconds / dt + 0.5) do
    w:step(dt)
    t = t + dt
    local now = wy()
    if (now > 0) ~= (last > 0) then crossings[#crossings + 1] = t - dt * now / (now - last) end
    last = now
  end
  if #crossings < 2 then return nil, #crossings end
  return (crossings[#crossings] - crossings[1]) / (#crossings - 1), #crossings
end

return tops
