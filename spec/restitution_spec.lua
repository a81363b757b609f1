-- Restitution at slow impacts, in both contact modes. The exact mode bounces every impact faster than
-- its cutoff, IMP_QP_BOUNCE_STEPS |g| h (1.5 steps of gravity: 0.245 m/s at 60 Hz under 9.81 m/s^2, none
-- without gravity), so a resting contact cannot chatter and a ball with e < 1 stops bouncing. The
-- impulse mode bounces approaches faster than world.restitution_threshold (0.5 m/s by default, as
-- Box2D's and Jolt's settings). Closed forms: two equal elastic balls meeting head on exchange their
-- velocities; an elastic gas keeps its kinetic energy.
local impetus = require "impetus"
local helpers = require "helpers"
local near = helpers.near

local fidelity = require "fidelity"
local two_balls = fidelity.two_balls

local function gas(mode, speed, threshold)
  local ratio, changed = fidelity.gas(mode, speed, threshold)
  assert(changed > 0, "the first ball never hit anything")
  return ratio
end

describe("world.restitution_threshold", function()
  it("is 0.5 m/s by default, takes any speed >= 0, and refuses the others naming the field", function()
    local w = impetus.world {}
    assert.are.equal(0.5, w.restitution_threshold)
    w.restitution_threshold = 0
    assert.are.equal(0, w.restitution_threshold)
    w.restitution_threshold = 2.5
    assert.are.equal(2.5, w.restitution_threshold)
    for _, bad in ipairs { -1, 0 / 0, math.huge, "fast", {} } do
      local ok, err = pcall(function() w.restitution_threshold = bad end)
      assert.is_false(ok)
      assert.matches("restitution_threshold", err)
      assert.are.equal(2.5, w.restitution_threshold)
    end
  end)
end)

describe("slow impacts", function()
  it("exact mode: two e = 1 balls meeting at 0.3 m/s swap velocities (no gravity, and rolling on a floor under gravity)", function()
    for _, gravity in ipairs { false, true } do
      local a, b = two_balls("qp", nil, gravity)
      near(a.velocity[1], -0.15, 1e-9, "a after")
      near(b.velocity[1], 0.15, 1e-9, "b after")
    end
  end)

  it("impulse mode: they swap with the threshold below 0.3 m/s, and stick together above it", function()
    local a, b = two_balls("impulse", 0.2)
    near(a.velocity[1], -0.15, 1e-9, "a after")
    near(b.velocity[1], 0.15, 1e-9, "b after")
    a, b = two_balls("impulse") -- 0.5 m/s: a perfectly inelastic meeting, both at rest
    near(a.velocity[1], 0, 1e-9, "a at the default threshold")
    near(b.velocity[1], 0, 1e-9, "b at the default threshold")
  end)

  it("exact mode: a ball with e = 0.5 dropped from 1 m stops bouncing: finitely many impacts, then rest on the floor", function()
    local w = impetus.world {}
    w.contact = "qp"
    w.restitution, w.friction = 0.5, 0
    w.sleeping = false
    w:plane {}
    local ball = w:sphere { radius = 0.1, position = { 0, 1.1, 0 } }
    local bounces, last_vy = 0, 0
    for _ = 1, 600 do
      w:step(1 / 60)
      local vy = ball.velocity[2]
      if last_vy < 0 and vy > 0.05 then bounces = bounces + 1 end -- (the last impact leaves it at rest)
      last_vy = vy
    end
    -- the k-th impact comes at v_k = sqrt(2 g 1 m) e^k = 4.43 * 0.5^k m/s and bounces while that is
    -- above the cutoff 1.5 g h = 0.245 m/s: k = 0 .. 4
    assert.are.equal(5, bounces)
    near(ball.velocity[2], 0, 1e-6, "at rest")
    near(ball.position[2], 0.1, 1e-3, "on the floor")
  end)
end)

describe("an elastic 50-ball gas", function()
  for _, mode in ipairs { "qp", "impulse" } do
    for _, speed in ipairs { 1, 5 } do
      it(("keeps its energy within 0.5 %% over 10 s (%s mode%s, speeds up to %g m/s per axis)"):format(mode,
        mode == "impulse" and ", threshold 0" or "", speed), function()
        local ratio = gas(mode, speed, mode == "impulse" and 0 or nil)
        -- pairwise elastic impulses keep the energy to round-off (measured 1e-15)
        assert(math.abs(ratio - 1) < 0.005, ("energy ratio %.6g"):format(ratio))
      end)
    end
  end

  it("loses energy in the impulse mode at the default threshold, where slow meetings do not bounce", function()
    local ratio = gas("impulse", 1)
    assert(ratio < 0.95, ("energy ratio %.4g"):format(ratio))
  end)
end)
