(define (domain basic-domain)
  (:requirements :strips :typing :conditional-effects)
  (:types room pot)
  (:predicates
    (robot_at ?r - room)
    (connected ?from - room ?to - room)
    (pot_at ?p - pot ?r - room)
    (holding_pot ?p - pot)
    (hands_free)
    (floor_dirty ?r - room)
    (floor_clean ?r - room)
    (floor_wet ?r - room)
    (soup_is_hot ?p - pot)
  )
  (:action move
    :parameters (?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (hands_free) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))
  (:action mop_floor
    :parameters (?r - room)
    :precondition (and (robot_at ?r) (floor_dirty ?r) (hands_free))
    :effect (and (floor_clean ?r) (floor_wet ?r) (not (floor_dirty ?r))))
  (:action dry_floor
    :parameters (?r - room)
    :precondition (and (robot_at ?r) (floor_wet ?r) (hands_free))
    :effect (and (not (floor_wet ?r))))
  (:action pick_up_pot
    :parameters (?p - pot ?r - room)
    :precondition (and (robot_at ?r) (pot_at ?p ?r) (hands_free))
    :effect (and (holding_pot ?p) (not (pot_at ?p ?r)) (not (hands_free))))
  (:action carry_pot
    :parameters (?p - pot ?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (holding_pot ?p) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))
  (:action put_down_pot
    :parameters (?p - pot ?r - room)
    :precondition (and (robot_at ?r) (holding_pot ?p))
    :effect (and (pot_at ?p ?r) (hands_free) (not (holding_pot ?p))))
)
