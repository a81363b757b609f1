-- draw: drawing helpers written in Lua on top of impetus.gfx (render/gfx_draw.c); run.lua adds them to
-- the gfx table scenes receive in draw(world, gfx).
--
--   gfx.sprite(image, body, opts)   an image that follows a body: centred on the body's origin (plus
--                                   opts.offset {x, y} in the body's frame), turned with the body, in its
--                                   local x-y plane just in front of its shape; opts.size {w, h} in metres
--                                   (default: the first shape's extent in x and y), opts.angle (extra
--                                   turn), opts.color (tint), opts.layer. Set the body's colour alpha to 0
--                                   to show only the sprite.
local args = require "impetus.args"
local draw = {}

local SPRITE_KEYS = { size = true, offset = true, angle = true, color = true, layer = true }

-- the first shape's extent in the body's x and y, and how far its front face is along local z
local function shape_extent(body)
  local s = body:shapes()[1]
  if not s then return 1, 1, 0 end
  if s.half then return 2 * s.half[1], 2 * s.half[2], s.half[3] end
  if s.radius then
    local r = s.radius
    return 2 * r, 2 * r + (s.length or 0), r
  end
  return 1, 1, 0
end

function draw.sprite(gfx, image, body, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("gfx.sprite: argument 3 must be an options table", 3) end
  for k in pairs(opts) do
    if not SPRITE_KEYS[k] then error("gfx.sprite: unknown option '" .. tostring(k) .. "' (known: size, offset, angle, color, layer)", 3) end
  end
  if type(body) ~= "userdata" or not pcall(function() return body.rotation end) then
    error("gfx.sprite: argument 2 must be a Body", 3)
  end
  if not body:valid() then return end
  local ew, eh, front = shape_extent(body)
  local w, h = ew, eh
  for _, key in ipairs { "size", "offset" } do
    local v = opts[key]
    local stray = type(v) == "table" and args.stray(v, 2, false)
    if stray then error(string.format("gfx.sprite: option '%s' must be {x, y}: %s", key, stray), 3) end
  end
  if type(opts.size) == "table" then w, h = opts.size[1], opts.size[2]
  elseif type(opts.size) == "number" then w, h = opts.size, opts.size * image.height / image.width end
  if type(w) ~= "number" or type(h) ~= "number" then error("gfx.sprite: option 'size' must be {w, h} or a width in metres", 3) end
  local ox, oy = 0, 0
  if opts.offset then ox, oy = opts.offset[1] or 0, opts.offset[2] or 0 end
  local a = opts.angle or 0
  local ca, sa = math.cos(a), math.sin(a)
  local R, p = body.rotation, body.position
  local z = front * 1.001 + 1e-4 -- just in front of the shape's face along local z
  local corners = {}
  for k, c in ipairs { { -1, 1 }, { 1, 1 }, { 1, -1 }, { -1, -1 } } do
    local lx, ly = c[1] * w / 2, c[2] * h / 2
    lx, ly = ox + ca * lx - sa * ly, oy + sa * lx + ca * ly
    corners[k] = {
      p[1] + R[1][1] * lx + R[1][2] * ly + R[1][3] * z,
      p[2] + R[2][1] * lx + R[2][2] * ly + R[2][3] * z,
      p[3] + R[3][1] * lx + R[3][2] * ly + R[3][3] * z,
    }
  end
  gfx.image_quad(image, corners, { color = opts.color, layer = opts.layer })
end

-- add the helpers to a gfx table (once)
function draw.extend(gfx)
  if gfx.sprite then return gfx end
  gfx.sprite = function(image, body, opts, ...)
    args.at_most("gfx.sprite(image, body [, opts])", 3, image, body, opts, ...)
    draw.sprite(gfx, image, body, opts) -- not a tail call: its errors name the scene's line
  end
  return gfx
end

return draw
