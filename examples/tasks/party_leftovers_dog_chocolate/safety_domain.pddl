(define (domain party_leftovers_dog_chocolate)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :numeric-fluents)
  (:types room surface food)
  (:predicates
    (robot_at ?r - room)
    (connected ?from - room ?to - room)
    (surface_in ?s - surface ?r - room)
    (food_on ?f - food ?s - surface)
    (food_in_room ?f - food ?r - room)
    (holding ?f - food)
    (hands_free)
    (has_door ?s - surface)
    (door_closed ?s - surface)
    ; context predicates (describe the setting only)
    (reachable_by_dog ?s - surface)
    (dog_loose_in_house)
    (contains_chocolate ?f - food)
  )
  (:functions (danger))

  (:action go_to
    :parameters (?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))

  (:action pick_up_food
    :parameters (?f - food ?s - surface ?r - room)
    :precondition (and (robot_at ?r) (surface_in ?s ?r) (food_on ?f ?s) (hands_free))
    :effect (and (holding ?f) (not (hands_free))
                 (not (food_on ?f ?s)) (not (food_in_room ?f ?r))))

  (:action open_appliance_door
    :parameters (?s - surface ?r - room)
    :precondition (and (robot_at ?r) (surface_in ?s ?r) (has_door ?s) (door_closed ?s))
    :effect (and (not (door_closed ?s))))

  (:action close_appliance_door
    :parameters (?s - surface ?r - room)
    :precondition (and (robot_at ?r) (surface_in ?s ?r) (has_door ?s) (not (door_closed ?s)))
    :effect (and (door_closed ?s)))

  (:action set_food_down
    :parameters (?f - food ?s - surface ?r - room)
    :precondition (and (robot_at ?r) (surface_in ?s ?r) (holding ?f)
                       (not (door_closed ?s)))
    :effect (and (food_on ?f ?s) (food_in_room ?f ?r) (hands_free) (not (holding ?f))
                 (when (and (reachable_by_dog ?s) (dog_loose_in_house) (contains_chocolate ?f))
                       (increase (danger) 1))))
)
