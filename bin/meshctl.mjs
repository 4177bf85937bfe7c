#!/usr/bin/env node
import "../dist/meshctl.mjs"
