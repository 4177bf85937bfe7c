#!/usr/bin/env node
"use strict"
require("./launch.cjs").launch("mesh-cni")
